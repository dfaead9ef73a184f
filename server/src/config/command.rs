//! The CONFIG command

use super::*;

/// CONFIG GET parameter [parameter ...]
// redis: config.c configGetCommand
pub fn config_get_command(srv: &mut Server, c: &mut Client) {
    // Matches in first-found order; each parameter once, under the name the
    // client typed (exact names) or the registered name (patterns).
    let mut matches: Vec<(String, ConfigRef)> = Vec::new();
    let seen = |m: &Vec<(String, ConfigRef)>, name: &str| {
        m.iter().any(|(n, _)| n.eq_ignore_ascii_case(name))
    };
    for i in 2..c.argc() {
        let pattern = c.arg(i).to_vec();
        if !pattern.iter().any(|b| matches!(b, b'[' | b'*' | b'?')) {
            let typed = String::from_utf8_lossy(&pattern).into_owned();
            if seen(&matches, &typed) {
                continue;
            }
            if let Some(r) = lookup_config(&pattern) {
                matches.push((typed, r));
            }
            continue;
        }
        for r in all_names() {
            // Hidden parameters need their exact name.
            if CONFIGS[r.idx].flags & HIDDEN_CONFIG != 0 || seen(&matches, r.name()) {
                continue;
            }
            if storage::util::string_match(&pattern, r.name().as_bytes(), true) {
                matches.push((r.name().to_string(), r));
            }
        }
    }
    c.add_reply_map_len(matches.len());
    for (name, r) in matches {
        c.add_reply_bulk(name.as_bytes());
        c.add_reply_bulk(format_value(r.idx, &srv.config.values[r.idx]).as_bytes());
    }
}

/// CONFIG SET parameter value [parameter value ...]
// redis: config.c configSetCommand
pub fn config_set_command(srv: &mut Server, c: &mut Client) {
    if c.argc() % 2 == 1 {
        c.add_reply_syntax_error();
        return;
    }
    // 1. Find every parameter; the first problem wins (unknown name,
    //    immutable / protected, duplicate).
    let mut targets: Vec<(ConfigRef, String)> = Vec::new();
    let mut unknown: Option<String> = None;
    let mut failure: Option<(String, String)> = None; // (argument, reason)
    let mut deny_loading = false;
    for i in (2..c.argc()).step_by(2) {
        let typed = String::from_utf8_lossy(c.arg(i)).into_owned();
        let Some(r) = lookup_config(c.arg(i)) else {
            if unknown.is_none() && failure.is_none() {
                unknown = Some(typed);
            }
            continue;
        };
        let flags = CONFIGS[r.idx].flags;
        // Every sensitive value is hidden from SLOWLOG and MONITOR, even
        // when an earlier argument already failed the command.
        if flags & SENSITIVE_CONFIG != 0 {
            c.redact_client_command_argument(i + 1);
        }
        if unknown.is_some() || failure.is_some() {
            continue;
        }
        if flags & IMMUTABLE_CONFIG != 0 {
            failure = Some((typed, "can't set immutable config".into()));
        } else if flags & PROTECTED_CONFIG != 0
            && !crate::server::allow_protected_action(srv.config.enable_protected_configs, c)
        {
            failure = Some((typed, "can't set protected config".into()));
        } else if flags & DENY_LOADING_CONFIG != 0 && srv.loading.loading {
            deny_loading = true;
            failure = Some((typed, "loading".into()));
        } else if targets.iter().any(|(t, _)| *t == r) {
            failure = Some((typed, "duplicate parameter".into()));
        } else {
            targets.push((r, String::from_utf8_lossy(c.arg(i + 1)).into_owned()));
        }
    }
    // The loading error first: clients may handle it (retry later).
    if deny_loading {
        c.add_reply_error(crate::rdb::LOADING_ERR);
        return;
    }
    if let Some(name) = unknown {
        c.add_reply_error(&format!(
            "ERR Unknown option or number of arguments for CONFIG SET - '{name}'"
        ));
        return;
    }
    if let Some((arg, why)) = failure {
        c.add_reply_error(&format!(
            "ERR CONFIG SET failed (possibly related to argument '{arg}') - {why}"
        ));
        return;
    }
    // 2. Parse every value into a copy: all or nothing.
    let old = srv.config.clone();
    let mut changed: Vec<usize> = Vec::new();
    for (r, value) in &targets {
        let args = if CONFIGS[r.idx].flags & MULTI_ARG_CONFIG != 0 {
            split_spaces(value)
        } else {
            vec![value.clone()]
        };
        match parse_value(r.idx, &args, &srv.config.values[r.idx], SetMode::ConfigSet) {
            Ok(v) => {
                if v != srv.config.values[r.idx] || v == Value::Dir {
                    changed.push(r.idx);
                }
                srv.config.values[r.idx] = v;
            }
            Err(why) => {
                srv.config = old;
                c.add_reply_error(&format!(
                    "ERR CONFIG SET failed (possibly related to argument '{}') - {why}",
                    r.name()
                ));
                return;
            }
        }
    }
    // 3. Apply the side effects (the apply functions), restoring all on failure.
    srv.config.clamp_hz();
    srv.config.sync_typed();
    if let Err((idx, why)) = apply_changes(srv, &changed) {
        server_log(
            LogLevel::Warning,
            &format!(
                "Failed applying new configuration. Possibly related to new {} setting. Restoring previous settings.",
                CONFIGS[idx].name
            ),
        );
        srv.config = old;
        let _ = apply_changes(srv, &changed);
        c.add_reply_error(&format!(
            "ERR CONFIG SET failed (possibly related to argument '{}') - {why}",
            CONFIGS[idx].name
        ));
        return;
    }
    c.add_reply_ok();
}

/// The apply functions (updateHZ, changeListenPort / changeBindAddr, the
/// log verbosity) for the rows whose value changed.
fn apply_changes(srv: &mut Server, changed: &[usize]) -> Result<(), (usize, String)> {
    let mut rebind = None;
    for &idx in changed {
        match CONFIGS[idx].name {
            "hz" => srv.hz = srv.config.hz,
            // updateRequirePass: the default user's password follows.
            "requirepass" => {
                let pass = srv.config.requirepass.clone();
                srv.acl.update_default_user_password(&pass);
            }
            // updateMaxclients: a bigger maxclients needs more descriptors;
            // when the system gives fewer, adjustOpenFilesLimit lowers
            // maxclients to what they allow, and that is the error.
            "maxclients" => {
                let wanted = srv.config.maxclients;
                let _ = crate::server::adjust_open_files_limit(&mut srv.config);
                if srv.config.maxclients != wanted {
                    return Err((
                        idx,
                        format!(
                            "The operating system is not able to handle the specified number of clients, try with {}",
                            srv.config.maxclients
                        ),
                    ));
                }
            }
            "maxmemory" => crate::evict::update_maxmemory(srv),
            "maxmemory-clients" => crate::client_eviction::apply_client_max_memory_usage(srv),
            "loglevel" => crate::log::set_verbosity(srv.config.loglevel),
            // updateJemallocBgThread
            "jemalloc-bg-thread" => {
                let _ =
                    crate::memory::set_jemalloc_bg_thread(srv.config.boolean("jemalloc-bg-thread"));
            }
            // updateGoodSlaves: recount at once, not at the next cron.
            "min-replicas-to-write" | "min-replicas-max-lag" => {
                crate::replication::master::refresh_good_slaves_count(srv, None)
            }
            name if crate::aof::is_aof_config(name) => {
                crate::aof::aof_apply_config(srv, name).map_err(|why| (idx, why.to_string()))?
            }
            // updateClusterAnnouncedPort: myself's ports as headers and
            // CLUSTER NODES show them, at once.
            "cluster-announce-port" | "cluster-announce-bus-port" | "cluster-announce-tls-port" => {
                crate::cluster::cluster_update_myself_announced_ports(srv)
            }
            "port" => rebind = Some((idx, "Unable to listen on this port. Check server logs.")),
            "bind" => rebind = rebind.or(Some((idx, "Failed to bind to specified addresses."))),
            _ => {}
        }
    }
    if let Some((idx, why)) = rebind {
        // Close the old listeners first (the same port may be reused).
        for mut l in std::mem::take(&mut srv.listeners) {
            let _ = srv.poll.registry().deregister(&mut l);
        }
        if let Err(msg) = crate::listen_to_port(srv) {
            server_log(LogLevel::Warning, &msg);
            for mut l in std::mem::take(&mut srv.listeners) {
                let _ = srv.poll.registry().deregister(&mut l);
            }
            return Err((idx, why.to_string()));
        }
    }
    Ok(())
}

/// CONFIG RESETSTAT
// redis: config.c configResetStatCommand
pub fn config_resetstat_command(srv: &mut Server, c: &mut Client) {
    // resetServerStats, resetCommandTableStats, resetErrorTableStats.
    srv.stats = Default::default();
    srv.inst_ops = Default::default();
    srv.inst_net_input = Default::default();
    srv.inst_net_output = Default::default();
    srv.inst_net_repl_input = Default::default();
    srv.inst_net_repl_output = Default::default();
    // The counters that live beside their subsystem's state.
    srv.repl.stat_sync_full = 0;
    srv.repl.stat_sync_partial_ok = 0;
    srv.repl.stat_sync_partial_err = 0;
    srv.rdb.stat_rdb_saves = 0;
    srv.aof.stat_aof_rewrites = 0;
    srv.aof.stat_aofrw_consecutive_failures = 0;
    srv.aof.delayed_fsync = 0;
    for cmd in srv.commands.commands.iter_mut() {
        cmd.stats = Default::default();
        cmd.histogram.reset();
    }
    // The expiry cycle's statistics and lazyfreed_objects go too.
    srv.expire_state.stale_perc = 0.0;
    srv.expire_state.time_cap_reached_count = 0;
    srv.expire_state.cycle_time_used_us = 0;
    srv.lazyfree.reset_stats();
    c.add_reply_ok();
}

/// CONFIG REWRITE
// redis: config.c configRewriteCommand
pub fn config_rewrite_command(srv: &mut Server, c: &mut Client) {
    if srv.config_file.is_empty() {
        c.add_reply_error("ERR The server is running without a config file");
        return;
    }
    let user_lines = srv.acl.config_user_lines();
    match rewrite_config(&srv.config, &srv.config_file, &user_lines, false) {
        Ok(()) => {
            server_log(LogLevel::Warning, "CONFIG REWRITE executed with success.");
            c.add_reply_ok();
        }
        Err(e) => {
            let why = strerror(&e);
            server_log(LogLevel::Warning, &format!("CONFIG REWRITE failed: {why}"));
            c.add_reply_error(&format!("ERR Rewriting config file: {why}"));
        }
    }
}

/// DEBUG CONFIG-REWRITE-FORCE-ALL: CONFIG REWRITE writing every option,
/// defaults included (the test suite restarts from such a file to check
/// that every option written can be read back).
// redis: debug.c debugCommand ("config-rewrite-force-all")
pub fn debug_config_rewrite_force_all(srv: &mut Server, c: &mut Client) {
    let user_lines = srv.acl.config_user_lines();
    match rewrite_config(&srv.config, &srv.config_file, &user_lines, true) {
        Ok(()) => c.add_reply_ok(),
        Err(e) => c.add_reply_error(&format!(
            "ERR CONFIG-REWRITE-FORCE-ALL failed: {}",
            strerror(&e)
        )),
    }
}

/// CONFIG HELP
// redis: config.c configHelpCommand
pub fn config_help_command(_srv: &mut Server, c: &mut Client) {
    c.add_reply_help(
        "CONFIG",
        &[
            "GET <pattern>",
            "    Return parameters matching the glob-like <pattern> and their values.",
            "SET <directive> <value>",
            "    Set the configuration <directive> to <value>.",
            "RESETSTAT",
            "    Reset statistics reported by the INFO command.",
            "REWRITE",
            "    Rewrite the configuration file.",
        ],
    );
}
