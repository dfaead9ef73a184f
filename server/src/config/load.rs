//! Start-up: command line and redis.conf (server.c main, config.c
//! loadServerConfig / loadServerConfigFromString)

use super::*;

/// The usage text `redis-server --help` prints (to stderr, exit 1).
const USAGE: &str = "Usage: ./redis-server [/path/to/redis.conf] [options] [-]
       ./redis-server - (read config from stdin)
       ./redis-server -v or --version
       ./redis-server -h or --help
       ./redis-server --test-memory <megabytes>
       ./redis-server --check-system

Examples:
       ./redis-server (run the server with default conf)
       echo 'maxmemory 128mb' | ./redis-server -
       ./redis-server /etc/redis/6379.conf
       ./redis-server --port 7777
       ./redis-server --port 7777 --replicaof 127.0.0.1 8888
       ./redis-server /etc/myredis.conf --loglevel verbose -
       ./redis-server /etc/myredis.conf --loglevel verbose

Sentinel mode:
       ./redis-server /etc/sentinel.conf --sentinel
";

/// The `--version` line. Same format as redis-server's, which tools parse
/// (`v=` is the version); redis-lite is named in the log banner instead.
pub fn version_string() -> String {
    format!("Redis server v={REDIS_VERSION} sha=00000000:0 malloc=jemalloc-5.3.0 bits=64 build={REDIS_BUILD_ID}")
}

/// `-v/--version` and `-h/--help` as the first argument: print and return
/// the exit code (0 for the version, 1 for the usage, as redis-server).
/// None: start normally.
pub fn early_exit_flags(args: &[String]) -> Option<i32> {
    match args.first().map(String::as_str) {
        Some("-v") | Some("--version") => {
            println!("{}", version_string());
            Some(0)
        }
        Some("-h") | Some("--help") => {
            eprint!("{USAGE}");
            Some(1)
        }
        _ => None,
    }
}

/// The FATAL CONFIG FILE ERROR text (loadServerConfigFromString loaderr).
fn fatal_config_error(line: Option<(usize, &str)>, err: &str) -> String {
    let mut s = format!("\n*** FATAL CONFIG FILE ERROR (Redis {REDIS_VERSION}) ***\n");
    if let Some((n, l)) = line {
        s.push_str(&format!(
            "Reading the configuration file, at line {n}\n>>> '{l}'\n"
        ));
    }
    s.push_str(err);
    s.push('\n');
    s
}

/// Directives Redis accepts and ignores (deprecatedConfig), with argc.
const DEPRECATED_CONFIGS: &[(&str, usize)] = &[
    ("list-max-ziplist-entries", 2),
    ("list-max-ziplist-value", 2),
    ("lua-replicate-commands", 2),
];

/// State of one start-up load: `save` lines after the first one add points.
struct Loader {
    cfg: Config,
    save_loaded: bool,
    /// A scratch ACL to check `user` lines against (built on the first one).
    acl_checker: Option<crate::acl::Acl>,
    /// A scratch command table the `rename-command` lines are checked on.
    renamer: Option<crate::commands::CommandTable>,
}

impl Loader {
    /// loadServerConfig for one file (include, or the main file): read it,
    /// then parse it. Unreadable: Redis logs and exits.
    fn load_file(&mut self, filename: &str) -> Result<(), String> {
        let text = read_config_files(filename)?;
        self.load_string(&text)
    }

    /// loadServerConfigFromString: one directive per line.
    fn load_string(&mut self, config: &str) -> Result<(), String> {
        for (i, raw) in config.split('\n').enumerate() {
            let line = raw.trim_matches([' ', '\t', '\r', '\n']);
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            let err_at = |e: &str| fatal_config_error(Some((i + 1, line)), e);
            let Some(mut argv) = split_args(line) else {
                return Err(err_at("Unbalanced quotes in configuration line"));
            };
            if argv.is_empty() {
                continue;
            }
            argv[0] = argv[0].to_ascii_lowercase();
            if let Some(r) = lookup_config(argv[0].as_bytes()) {
                self.apply_directive(r, &argv).map_err(|e| err_at(&e))?;
                continue;
            }
            let argc = argv.len();
            if DEPRECATED_CONFIGS
                .iter()
                .any(|(n, c)| argv[0] == *n && argc == *c)
            {
                continue;
            }
            match argv[0].as_str() {
                "include" if argc == 2 => self.load_file(&argv[1])?,
                "rename-command" if argc == 3 => {
                    let t = self
                        .renamer
                        .get_or_insert_with(crate::commands::CommandTable::new);
                    t.rename(argv[1].as_bytes(), argv[2].as_bytes())
                        .map_err(err_at)?;
                    self.cfg
                        .renamed_commands
                        .push((argv[1].clone(), argv[2].clone()));
                }
                "user" if argc >= 2 => {
                    // ACLAppendUserForLoading: the rules are checked now
                    // (unknown commands excepted), the user made later.
                    let argv_b: Vec<bytes::Bytes> = argv
                        .iter()
                        .map(|a| bytes::Bytes::copy_from_slice(a.as_bytes()))
                        .collect();
                    let checker = self.acl_checker.get_or_insert_with(|| {
                        crate::acl::Acl::new(&crate::commands::CommandTable::new())
                    });
                    if let Err((idx, e)) = checker.append_user_for_loading(&argv_b) {
                        let bad = argv.get(idx).cloned().unwrap_or_default();
                        return Err(err_at(&format!(
                            "Error in user declaration '{bad}': {}",
                            e.message()
                        )));
                    }
                    self.cfg.user_lines.push(argv.clone());
                }
                "loadmodule" if argc >= 2 => {
                    return Err(err_at("Modules are not supported by redis-lite"));
                }
                "sentinel" => {
                    if argc != 1 {
                        return Err(err_at("sentinel directive while not in sentinel mode"));
                    }
                }
                name if name.contains('.') => {
                    if argc != 2 {
                        return Err(err_at("Module config specified without value"));
                    }
                    return Err(err_at("Module configs are not supported by redis-lite"));
                }
                _ => return Err(err_at("Bad directive or wrong number of arguments")),
            }
        }
        Ok(())
    }

    /// One known parameter from redis.conf / the command line.
    fn apply_directive(&mut self, r: ConfigRef, argv: &[String]) -> Result<(), String> {
        let row = &CONFIGS[r.idx];
        let multi = row.flags & MULTI_ARG_CONFIG != 0;
        if !multi && argv.len() != 2 {
            return Err("wrong number of arguments".into());
        }
        // `--save "900 1"` arrives as one argument: split it again.
        let args: Vec<String> = if multi && argv.len() == 2 && !argv[1].is_empty() {
            split_args(&argv[1]).unwrap_or_default()
        } else {
            argv[1..].to_vec()
        };
        let mode = SetMode::File {
            save_loaded: self.save_loaded,
        };
        let v = parse_value(r.idx, &args, &self.cfg.values[r.idx], mode)?;
        if let Kind::Special(Special::Save) = row.kind {
            self.save_loaded = true;
        }
        self.cfg.values[r.idx] = v;
        Ok(())
    }
}

/// Read a config file, or every file a glob pattern matches (include
/// conf.d/*.conf; no match is fine). A plain file that cannot be opened is
/// fatal, with Redis's log line.
fn read_config_files(filename: &str) -> Result<String, String> {
    let fail = |path: &str, e: &io::Error| {
        server_log(
            LogLevel::Warning,
            &format!(
                "Fatal error, can't open config file '{path}': {}",
                strerror(e)
            ),
        );
        String::new()
    };
    if !filename.contains(['*', '?', '[']) {
        return std::fs::read(filename)
            .map(|b| String::from_utf8_lossy(&b).into_owned())
            .map_err(|e| fail(filename, &e));
    }
    let dir = std::path::Path::new(filename)
        .parent()
        .unwrap_or(std::path::Path::new("."));
    let pattern = std::path::Path::new(filename)
        .file_name()
        .map(|f| f.to_string_lossy().into_owned())
        .unwrap_or_default();
    let mut paths: Vec<std::path::PathBuf> =
        match std::fs::read_dir(if dir.as_os_str().is_empty() {
            std::path::Path::new(".")
        } else {
            dir
        }) {
            Ok(rd) => rd
                .filter_map(|e| e.ok())
                .filter(|e| {
                    storage::util::string_match(
                        pattern.as_bytes(),
                        e.file_name().to_string_lossy().as_bytes(),
                        false,
                    )
                })
                .map(|e| e.path())
                .collect(),
            Err(_) => Vec::new(),
        };
    paths.sort();
    let mut text = String::new();
    for p in paths {
        let s = p.display().to_string();
        let b = std::fs::read(&p).map_err(|e| fail(&s, &e))?;
        text.push_str(&String::from_utf8_lossy(&b));
    }
    Ok(text)
}

impl Config {
    /// Parse `redis-lite [/path/redis.conf] [--name value ...] [-]` as
    /// redis-server's main() does: the file, then stdin (`-`), then the
    /// options, each `--name` starting a new directive line. Returns the
    /// configuration and the absolute config file path ("" without one).
    /// Err holds the whole text for stderr (the FATAL CONFIG FILE ERROR
    /// block); the caller exits with status 1.
    pub fn from_args(args: &[String]) -> Result<(Config, String), String> {
        let mut j = 0;
        let mut config_file = String::new();
        if let Some(first) = args.first() {
            if !first.starts_with('-') {
                config_file = absolute_path(first);
                j = 1;
            }
        }
        let mut options = String::new();
        let mut from_stdin = false;
        let mut handled_last_config_arg = true;
        let argc = args.len();
        while j < argc {
            let a = &args[j];
            let next_is_option = j + 1 < argc && args[j + 1].starts_with("--");
            if a == "-" && (j == 0 || j == argc - 1) {
                from_stdin = true;
            } else if handled_last_config_arg && a.starts_with("--") {
                if !options.is_empty() {
                    options.push('\n');
                }
                options.push_str(&a[2..]);
                options.push(' ');
                if split_args(a).map(|v| v.len()) == Some(1) {
                    // Only a name: its value(s) follow.
                    handled_last_config_arg = false;
                    if a.eq_ignore_ascii_case("--save") && (next_is_option || j == argc - 1) {
                        // `--save` with no value means `--save ""`.
                        options.push_str("\"\"");
                        handled_last_config_arg = true;
                    } else if a.eq_ignore_ascii_case("--sentinel")
                        && (next_is_option || j == argc - 1)
                    {
                        handled_last_config_arg = true;
                    }
                } else {
                    handled_last_config_arg = true;
                }
            } else {
                options.push_str(&repr(a));
                options.push(' ');
                handled_last_config_arg = true;
            }
            j += 1;
        }

        let mut loader = Loader {
            cfg: Config::default(),
            save_loaded: false,
            acl_checker: None,
            renamer: None,
        };
        let mut text = String::new();
        if !config_file.is_empty() {
            text = read_config_files(&config_file)?;
        }
        if from_stdin {
            server_log(LogLevel::Warning, "Reading config from stdin");
            let mut s = String::new();
            let _ = io::Read::read_to_string(&mut io::stdin(), &mut s);
            text.push_str(&s);
        }
        if !options.is_empty() {
            text.push('\n');
            text.push_str(&options);
        }
        loader.load_string(&text)?;

        let mut cfg = loader.cfg;
        // Checked after the whole file, so no line is quoted.
        let logfile = cfg.s("logfile");
        if !logfile.is_empty() {
            if let Err(e) = std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(&logfile)
            {
                return Err(fatal_config_error(
                    None,
                    &format!("Can't open the log file: {}", strerror(&e)),
                ));
            }
        }
        cfg.clamp_hz();
        cfg.sync_typed();
        crate::log::set_verbosity(cfg.loglevel);
        Ok((cfg, config_file))
    }
}

/// getAbsolutePath: the config file as INFO and CONFIG REWRITE see it.
fn absolute_path(p: &str) -> String {
    let path = std::path::Path::new(p);
    if path.is_absolute() {
        return p.to_string();
    }
    match std::env::current_dir() {
        Ok(cwd) => cwd.join(path).display().to_string(),
        Err(_) => p.to_string(),
    }
}
