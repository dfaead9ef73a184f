//! Validators (config.c isValid*)

/// pathIsBaseName: no directory separators.
fn path_is_base_name(p: &str) -> bool {
    !p.contains('/') && !p.contains('\\')
}

pub(super) fn is_valid_dbfilename(v: &str) -> Result<(), String> {
    if !path_is_base_name(v) {
        return Err("dbfilename can't be a path, just a filename".into());
    }
    Ok(())
}

pub(super) fn is_valid_aof_filename(v: &str) -> Result<(), String> {
    if v.is_empty() {
        return Err("appendfilename can't be empty".into());
    }
    if !path_is_base_name(v) {
        return Err("appendfilename can't be a path, just a filename".into());
    }
    Ok(())
}

pub(super) fn is_valid_aof_dirname(v: &str) -> Result<(), String> {
    if v.is_empty() {
        return Err("appenddirname can't be empty".into());
    }
    if !path_is_base_name(v) {
        return Err("appenddirname can't be a path, just a dirname".into());
    }
    Ok(())
}

/// NET_HOST_STR_LEN: hostnames are shorter than 256 bytes.
const NET_HOST_STR_LEN: usize = 256;

pub(super) fn is_valid_announced_hostname(v: &str) -> Result<(), String> {
    if v.len() >= NET_HOST_STR_LEN {
        return Err(format!(
            "Hostnames must be less than {NET_HOST_STR_LEN} characters"
        ));
    }
    if !v
        .bytes()
        .all(|c| c.is_ascii_alphanumeric() || c == b'-' || c == b'.')
    {
        return Err("Hostnames may only contain alphanumeric characters, hyphens or dots".into());
    }
    Ok(())
}

/// validateProcTitleTemplate: every `{var}` is known and the expansion
/// (with an empty title) is not blank. `{{` is a literal brace.
pub(super) fn is_valid_proc_title_template(v: &str) -> Result<(), String> {
    const ERR: &str = "template format is invalid or contains unknown variables";
    let mut out = String::new();
    let mut rest = v;
    while let Some(open) = rest.find('{') {
        out.push_str(&rest[..open]);
        let after = &rest[open + 1..];
        if after.is_empty() {
            return Err(ERR.into());
        }
        if let Some(stripped) = after.strip_prefix('{') {
            out.push('{');
            rest = stripped;
            continue;
        }
        let Some(close) = after.find('}') else {
            return Err(ERR.into());
        };
        // The values a process title would use; only emptiness matters here.
        let value = match &after[..close] {
            "title" | "server-mode" | "unixsocket" | "config-file" => "",
            "listen-addr" => "*:6379",
            "port" => "6379",
            "tls-port" => "0",
            _ => return Err(ERR.into()),
        };
        out.push_str(value);
        rest = &after[close + 1..];
    }
    out.push_str(rest);
    if out.trim_matches(' ').is_empty() {
        return Err(ERR.into());
    }
    Ok(())
}
