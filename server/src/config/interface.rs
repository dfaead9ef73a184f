//! Per-type parse / print (the interface.set / interface.get of config.c)

use super::*;

/// numericParseString + numericBoundaryCheck.
pub(super) fn parse_numeric(
    v: &str,
    lower: i64,
    upper: i64,
    unsigned: bool,
    flags: u8,
) -> Result<i64, String> {
    let mut res: Option<i64> = None;
    if flags & MEMORY_CONFIG != 0 {
        res = memtoull(v).map(|m| m as i64);
    }
    if res.is_none() && flags & PERCENT_CONFIG != 0 && v.len() > 1 && v.ends_with('%') {
        if let Some(p) = storage::util::string2ll(&v.as_bytes()[..v.len() - 1]) {
            if p >= 0 {
                res = Some(-p);
            }
        }
    }
    if res.is_none() && flags & OCTAL_CONFIG != 0 {
        res = strtoll_full(v, 8);
    }
    if res.is_none() && flags == 0 {
        res = storage::util::string2ll(v.as_bytes());
    }
    let Some(ll) = res else {
        let msg = if flags & MEMORY_CONFIG != 0 && flags & PERCENT_CONFIG != 0 {
            "argument must be a memory or percent value"
        } else if flags & MEMORY_CONFIG != 0 {
            "argument must be a memory value"
        } else if flags & OCTAL_CONFIG != 0 {
            "argument couldn't be parsed as an octal number"
        } else {
            "argument couldn't be parsed into an integer"
        };
        return Err(msg.into());
    };
    if unsigned {
        let (u, lo, hi) = (ll as u64, lower as u64, upper as u64);
        if u > hi || u < lo {
            return Err(if flags & OCTAL_CONFIG != 0 {
                format!("argument must be between {lo:o} and {hi:o} inclusive")
            } else {
                format!("argument must be between {lo} and {hi} inclusive")
            });
        }
    } else if flags & PERCENT_CONFIG != 0 && ll < 0 {
        if ll < lower {
            return Err(format!(
                "percentage argument must be less or equal to {}",
                -lower
            ));
        }
    } else if ll > upper || ll < lower {
        return Err(format!(
            "argument must be between {lower} and {upper} inclusive"
        ));
    }
    Ok(ll)
}

/// numericConfigGet.
pub(super) fn format_numeric(v: i64, flags: u8) -> String {
    if flags & PERCENT_CONFIG != 0 && v < 0 {
        format!("{}%", -(v as i128))
    } else if flags & MEMORY_CONFIG != 0 {
        (v as u64).to_string()
    } else if flags & OCTAL_CONFIG != 0 {
        format!("{v:o}")
    } else {
        v.to_string()
    }
}

/// configEnumGetValue: one name, or for bitflags several names OR-ed.
pub(super) fn parse_enum(values: &[(&str, i32)], args: &[String], bitflags: bool) -> Option<i32> {
    if args.is_empty() || (!bitflags && args.len() != 1) {
        return None;
    }
    let mut out = 0;
    for a in args {
        let mut matched = false;
        for (name, val) in values {
            if a.eq_ignore_ascii_case(name) {
                out |= val;
                matched = true;
            }
        }
        if !matched {
            return None;
        }
    }
    Some(out)
}

/// configEnumGetName: the first exact match, else (bitflags) the names of
/// the set bits in table order; "unknown" when nothing fits.
pub(super) fn enum_name(values: &[(&str, i32)], v: i32, bitflags: bool) -> String {
    let mut names: Vec<&str> = Vec::new();
    let mut unmatched = v;
    for (name, val) in values {
        if *val == v {
            return name.to_string();
        }
        if bitflags && *val != 0 && *val == (unmatched & val) {
            names.push(name);
            unmatched &= !val;
        }
    }
    if names.is_empty() || unmatched != 0 {
        return "unknown".into();
    }
    names.join(" ")
}

/// keyspaceEventsStringToFlags: None on an unknown letter.
pub fn keyspace_events_string_to_flags(s: &str) -> Option<i32> {
    let mut flags = 0;
    for c in s.chars() {
        flags |= match c {
            'A' => NOTIFY_ALL,
            'g' => NOTIFY_GENERIC,
            '$' => NOTIFY_STRING,
            'l' => NOTIFY_LIST,
            's' => NOTIFY_SET,
            'h' => NOTIFY_HASH,
            'z' => NOTIFY_ZSET,
            'x' => NOTIFY_EXPIRED,
            'e' => NOTIFY_EVICTED,
            'K' => NOTIFY_KEYSPACE,
            'E' => NOTIFY_KEYEVENT,
            't' => NOTIFY_STREAM,
            'm' => NOTIFY_KEY_MISS,
            'd' => NOTIFY_MODULE,
            'n' => NOTIFY_NEW,
            _ => return None,
        };
    }
    Some(flags)
}

/// keyspaceEventsFlagsToString: `A` when every type class is on, else the
/// class letters; then K, E, m. (n is not printed when A is, as in Redis.)
pub fn keyspace_events_flags_to_string(flags: i32) -> String {
    let mut res = String::new();
    if flags & NOTIFY_ALL == NOTIFY_ALL {
        res.push('A');
    } else {
        for (bit, c) in [
            (NOTIFY_GENERIC, 'g'),
            (NOTIFY_STRING, '$'),
            (NOTIFY_LIST, 'l'),
            (NOTIFY_SET, 's'),
            (NOTIFY_HASH, 'h'),
            (NOTIFY_ZSET, 'z'),
            (NOTIFY_EXPIRED, 'x'),
            (NOTIFY_EVICTED, 'e'),
            (NOTIFY_STREAM, 't'),
            (NOTIFY_MODULE, 'd'),
            (NOTIFY_NEW, 'n'),
        ] {
            if flags & bit != 0 {
                res.push(c);
            }
        }
    }
    for (bit, c) in [
        (NOTIFY_KEYSPACE, 'K'),
        (NOTIFY_KEYEVENT, 'E'),
        (NOTIFY_KEY_MISS, 'm'),
    ] {
        if flags & bit != 0 {
            res.push(c);
        }
    }
    res
}

/// getClientTypeByName for output buffer classes (master is refused).
fn client_class(name: &str) -> Option<usize> {
    match name.to_ascii_lowercase().as_str() {
        "normal" => Some(CLIENT_TYPE_NORMAL),
        "slave" | "replica" => Some(CLIENT_TYPE_SLAVE),
        "pubsub" => Some(CLIENT_TYPE_PUBSUB),
        _ => None,
    }
}

pub(super) const CLIENT_CLASS_NAMES: [&str; 3] = ["normal", "slave", "pubsub"];

/// How a value is being set: a redis.conf line (the first `save` line
/// replaces the defaults, later ones add) or CONFIG SET.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum SetMode {
    File { save_loaded: bool },
    ConfigSet,
}

/// interface.set minus the side effects: parse `args` for row `idx` into the
/// value to store. `current` is the value stored now (save, c-o-b-l and
/// bind keep parts of it). Errors are Redis's texts.
pub(super) fn parse_value(
    idx: usize,
    args: &[String],
    current: &Value,
    mode: SetMode,
) -> Result<Value, String> {
    let row = &CONFIGS[idx];
    let first = args.first().map(String::as_str).unwrap_or("");
    match &row.kind {
        Kind::Bool { .. } => match yesnotoi(first) {
            Some(b) => Ok(Value::Bool(b)),
            None => Err("argument must be 'yes' or 'no'".into()),
        },
        Kind::Num {
            lower,
            upper,
            unsigned,
            flags,
            ..
        } => parse_numeric(first, *lower, *upper, *unsigned, *flags).map(Value::Num),
        Kind::Enum {
            values, bitflags, ..
        } => {
            let Some(v) = parse_enum(values, args, *bitflags) else {
                let names: Vec<&str> = values.iter().map(|(n, _)| *n).collect();
                return Err(format!(
                    "argument(s) must be one of the following: {}",
                    names.join(", ")
                ));
            };
            if *bitflags && v & SHUTDOWN_SAVE != 0 && v & SHUTDOWN_NOSAVE != 0 {
                return Err("shutdown options SAVE and NOSAVE can't be used simultaneously".into());
            }
            Ok(Value::Enum(v))
        }
        Kind::Str {
            empty_is_null,
            check,
            ..
        } => {
            if let Some(check) = check {
                check(first)?;
            }
            if *empty_is_null && first.is_empty() {
                Ok(Value::Str(None))
            } else {
                Ok(Value::Str(Some(first.to_string())))
            }
        }
        Kind::Special(s) => parse_special(*s, args, current, mode),
    }
}

fn parse_special(
    s: Special,
    args: &[String],
    current: &Value,
    mode: SetMode,
) -> Result<Value, String> {
    match s {
        Special::Dir => {
            if args.len() != 1 {
                return Err("wrong number of arguments".into());
            }
            // setConfigDirOption: chdir right away (its "value" is the cwd).
            std::env::set_current_dir(&args[0]).map_err(|e| strerror(&e))?;
            Ok(Value::Dir)
        }
        Special::Save => {
            // A single "" means "no save points": it clears the points set
            // so far, even those of earlier redis.conf lines.
            if args.len() == 1 && args[0].is_empty() {
                return Ok(Value::Save(Vec::new()));
            }
            if args.len() % 2 == 1 {
                return Err("Invalid save parameters".into());
            }
            let mut points = Vec::new();
            for pair in args.chunks(2) {
                let secs = strtoll_full(&pair[0], 10).filter(|v| *v >= 1);
                let changes = strtoll_full(&pair[1], 10).filter(|v| *v >= 0);
                match (secs, changes) {
                    (Some(s), Some(c)) => points.push((s, c as i32 as i64)),
                    _ => return Err("Invalid save parameters".into()),
                }
            }
            // While reading redis.conf the first `save` line replaces the
            // defaults and the next ones add to it.
            if let (SetMode::File { save_loaded: true }, Value::Save(old)) = (mode, current) {
                let mut all = old.clone();
                all.extend(points);
                return Ok(Value::Save(all));
            }
            Ok(Value::Save(points))
        }
        Special::ClientOutputBufferLimit => {
            if !args.len().is_multiple_of(4) {
                return Err("Wrong number of arguments in buffer limit configuration.".into());
            }
            let mut limits = match current {
                Value::ObufLimits(l) => *l,
                _ => CLIENT_BUFFER_LIMITS_DEFAULTS,
            };
            for q in args.chunks(4) {
                let Some(class) = client_class(&q[0]) else {
                    return Err(
                        "Invalid client class specified in buffer limit configuration.".into(),
                    );
                };
                let hard = memtoull(&q[1]);
                let soft = memtoull(&q[2]);
                let secs = strtoll_full(&q[3], 10)
                    .map(|v| v as i32 as i64)
                    .filter(|v| *v >= 0);
                let (Some(hard), Some(soft), Some(secs)) = (hard, soft, secs) else {
                    return Err("Error in hard, soft or soft_seconds setting in buffer limit configuration.".into());
                };
                limits[class] = ClientBufferLimit {
                    hard_limit_bytes: hard,
                    soft_limit_bytes: soft,
                    soft_limit_seconds: secs,
                };
            }
            Ok(Value::ObufLimits(limits))
        }
        Special::OomScoreAdjValues => {
            if args.len() != 3 {
                return Err("wrong number of arguments".into());
            }
            let mut v = [0i32; 3];
            for (slot, a) in v.iter_mut().zip(args) {
                match strtoll_full(a, 10) {
                    Some(n) if (-2000..=2000).contains(&n) => *slot = n as i32,
                    _ => return Err(
                        "Invalid oom-score-adj-values, elements must be between -2000 and 2000."
                            .into(),
                    ),
                }
            }
            Ok(Value::Oom(v))
        }
        Special::NotifyKeyspaceEvents => {
            if args.len() != 1 {
                return Err("wrong number of arguments".into());
            }
            match keyspace_events_string_to_flags(&args[0]) {
                Some(f) => Ok(Value::Notify(f)),
                None => Err("Invalid event class character. Use 'Ag$lshzxeKEtmdn'.".into()),
            }
        }
        Special::Bind => {
            if args.len() > CONFIG_BINDADDR_MAX {
                return Err("Too many bind addresses specified.".into());
            }
            if args.len() == 1 && args[0].is_empty() {
                return Ok(Value::Bind(Vec::new()));
            }
            Ok(Value::Bind(args.to_vec()))
        }
        Special::ReplicaOf => {
            if args.len() != 2 {
                return Err("wrong number of arguments".into());
            }
            if args[0].eq_ignore_ascii_case("no") && args[1].eq_ignore_ascii_case("one") {
                return Ok(Value::ReplicaOf(None));
            }
            match strtoll_full(&args[1], 10) {
                Some(p) if (0..=65535).contains(&p) => {
                    Ok(Value::ReplicaOf(Some((args[0].clone(), p))))
                }
                _ => Err("Invalid master port".into()),
            }
        }
        Special::LatencyTrackingInfoPercentiles => {
            if args.len() == 1 && args[0].is_empty() {
                return Ok(Value::Percentiles(Vec::new()));
            }
            let mut out = Vec::with_capacity(args.len().min(64));
            for a in args {
                let Some(p) = storage::util::string2d(a.as_bytes()) else {
                    return Err("Invalid latency-tracking-info-percentiles parameters".into());
                };
                if !(0.0..=100.0).contains(&p) {
                    return Err("latency-tracking-info-percentiles parameters should sit between [0.0,100.0]".into());
                }
                out.push(p);
            }
            Ok(Value::Percentiles(out))
        }
    }
}

/// interface.get: the text CONFIG GET returns.
pub(super) fn format_value(idx: usize, v: &Value) -> String {
    let row = &CONFIGS[idx];
    match (v, &row.kind) {
        (Value::Bool(b), _) => if *b { "yes" } else { "no" }.into(),
        (Value::Num(n), Kind::Num { flags, .. }) => format_numeric(*n, *flags),
        (Value::Num(n), _) => n.to_string(),
        (
            Value::Enum(e),
            Kind::Enum {
                values, bitflags, ..
            },
        ) => enum_name(values, *e, *bitflags),
        (Value::Enum(e), _) => e.to_string(),
        (Value::Str(s), _) => s.clone().unwrap_or_default(),
        (Value::Save(points), _) => points
            .iter()
            .map(|(s, c)| format!("{s} {c}"))
            .collect::<Vec<_>>()
            .join(" "),
        (Value::ObufLimits(l), _) => (0..3)
            .map(|j| {
                format!(
                    "{} {} {} {}",
                    CLIENT_CLASS_NAMES[j],
                    l[j].hard_limit_bytes,
                    l[j].soft_limit_bytes,
                    l[j].soft_limit_seconds
                )
            })
            .collect::<Vec<_>>()
            .join(" "),
        (Value::Oom(v), _) => format!("{} {} {}", v[0], v[1], v[2]),
        (Value::Notify(f), _) => keyspace_events_flags_to_string(*f),
        (Value::Bind(b), _) => b.join(" "),
        (Value::ReplicaOf(r), _) => match r {
            Some((h, p)) => format!("{h} {p}"),
            None => String::new(),
        },
        (Value::Percentiles(p), _) => p
            .iter()
            .map(|d| trim_double(*d))
            .collect::<Vec<_>>()
            .join(" "),
        (Value::Dir, _) => std::env::current_dir()
            .map(|p| p.display().to_string())
            .unwrap_or_default(),
    }
}

/// The value a row starts with (interface.init).
pub(super) fn default_value(idx: usize) -> Value {
    match &CONFIGS[idx].kind {
        Kind::Bool { default } => Value::Bool(*default),
        Kind::Num { default, .. } => Value::Num(*default),
        Kind::Enum { default, .. } => Value::Enum(*default),
        Kind::Str { default, .. } => Value::Str(default.map(str::to_string)),
        Kind::Special(s) => match s {
            Special::Dir => Value::Dir,
            // The compiled-in save points (what a bare redis-server shows).
            Special::Save => Value::Save(vec![(3600, 1), (300, 100), (60, 10000)]),
            Special::ClientOutputBufferLimit => Value::ObufLimits(CLIENT_BUFFER_LIMITS_DEFAULTS),
            Special::OomScoreAdjValues => Value::Oom([0, 200, 800]),
            Special::NotifyKeyspaceEvents => Value::Notify(0),
            Special::Bind => Value::Bind(vec!["*".into(), "-::*".into()]),
            Special::ReplicaOf => Value::ReplicaOf(None),
            Special::LatencyTrackingInfoPercentiles => Value::Percentiles(vec![50.0, 99.0, 99.9]),
        },
    }
}
