//! Unit tests of the config module (parsing, printing, the table).

use super::*;

#[test]
fn memory_units_parse_like_memtoull() {
    assert_eq!(memtoull("1gb"), Some(1 << 30));
    assert_eq!(memtoull("1GB"), Some(1 << 30));
    assert_eq!(memtoull("100mb"), Some(100 << 20));
    assert_eq!(memtoull("2k"), Some(2000));
    assert_eq!(memtoull("2kb"), Some(2048));
    assert_eq!(memtoull("7b"), Some(7));
    assert_eq!(memtoull("gb"), Some(0));
    assert_eq!(memtoull(""), Some(0));
    assert_eq!(memtoull("99999999999999999999999"), Some(u64::MAX));
    assert_eq!(memtoull("17179869184gb"), Some(0)); // wraps, as in C
    assert_eq!(memtoull("-1"), None);
    assert_eq!(memtoull("1.5g"), None);
    assert_eq!(memtoull("+5"), None);
    assert_eq!(memtoull(" 5"), None);
}

#[test]
fn numeric_bounds_and_errors_match_redis() {
    let hz = parse_numeric("abc", 0, INT_MAX, false, 0).unwrap_err();
    assert_eq!(hz, "argument couldn't be parsed into an integer");
    let e = parse_numeric("-1", 0, INT_MAX, false, 0).unwrap_err();
    assert_eq!(e, "argument must be between 0 and 2147483647 inclusive");
    let e = parse_numeric("-1", 1, UINT_MAX, true, 0).unwrap_err();
    assert_eq!(e, "argument must be between 1 and 4294967295 inclusive");
    assert_eq!(
        parse_numeric("1mb", 1 << 20, LONG_MAX, false, MEMORY_CONFIG),
        Ok(1 << 20)
    );
    let e = parse_numeric("-1", 1 << 20, LONG_MAX, false, MEMORY_CONFIG).unwrap_err();
    assert_eq!(e, "argument must be a memory value");
    assert_eq!(
        parse_numeric("10%", -100, LONG_MAX, false, MEMORY_CONFIG | PERCENT_CONFIG),
        Ok(-10)
    );
    let e = parse_numeric(
        "101%",
        -100,
        LONG_MAX,
        false,
        MEMORY_CONFIG | PERCENT_CONFIG,
    )
    .unwrap_err();
    assert_eq!(e, "percentage argument must be less or equal to 100");
    assert_eq!(format_numeric(-10, MEMORY_CONFIG | PERCENT_CONFIG), "10%");
    assert_eq!(
        parse_numeric("777", 0, 0o777, true, OCTAL_CONFIG),
        Ok(0o777)
    );
    assert_eq!(format_numeric(0o755, OCTAL_CONFIG), "755");
    // ULLONG_MAX bound: any u64 fits.
    assert_eq!(
        parse_numeric("18446744073709551615", 0, ULLONG_MAX, true, MEMORY_CONFIG),
        Ok(-1)
    );
    assert_eq!(format_numeric(-1, MEMORY_CONFIG), "18446744073709551615");
}

#[test]
fn bools_and_enums() {
    assert_eq!(yesnotoi("YES"), Some(true));
    assert_eq!(yesnotoi("no"), Some(false));
    assert_eq!(yesnotoi("1"), None);
    assert_eq!(
        parse_enum(LOGLEVEL_ENUM, &["WARNING".into()], false),
        Some(3)
    );
    assert_eq!(parse_enum(LOGLEVEL_ENUM, &["x".into()], false), None);
    let v = parse_enum(SHUTDOWN_ON_SIG_ENUM, &["now".into(), "save".into()], true).unwrap();
    assert_eq!(enum_name(SHUTDOWN_ON_SIG_ENUM, v, true), "save now");
    assert_eq!(enum_name(OOM_SCORE_ADJ_ENUM, 1, false), "yes");
}

#[test]
fn notify_flags_round_trip() {
    let f = keyspace_events_string_to_flags("KEA").unwrap();
    assert_eq!(keyspace_events_flags_to_string(f), "AKE");
    let f = keyspace_events_string_to_flags("Ex").unwrap();
    assert_eq!(keyspace_events_flags_to_string(f), "xE");
    assert_eq!(keyspace_events_string_to_flags("Kq"), None);
}

#[test]
fn registry_lists_what_config_get_star_lists() {
    // redis-server 7.0.15 answers CONFIG GET * with 192 names.
    let visible = all_names()
        .filter(|r| CONFIGS[r.idx].flags & HIDDEN_CONFIG == 0)
        .count();
    assert_eq!(visible, 192);
    assert_eq!(
        lookup_config(b"SLAVE-PRIORITY").map(|r| r.name()),
        Some("slave-priority")
    );
    assert!(lookup_config(b"nosuch").is_none());
}

#[test]
fn defaults_and_set_update_typed_fields() {
    let mut c = Config::default();
    assert_eq!(
        c.get_string("save").as_deref(),
        Some("3600 1 300 100 60 10000")
    );
    assert_eq!(
        c.get_string("enable-debug-command").as_deref(),
        Some("local")
    );
    assert_eq!(c.proto_max_bulk_len, 512 << 20);
    c.set_from_str("hz", "1000").unwrap();
    assert_eq!(c.hz, 500);
    c.set_from_str("maxmemory", "1gb").unwrap();
    assert_eq!(c.maxmemory, 1 << 30);
    c.set_from_str("maxmemory-policy", "ALLKEYS-LRU").unwrap();
    assert_eq!(c.maxmemory_policy, MaxmemoryPolicy::AllkeysLru);
    c.set_from_str("list-max-ziplist-size", "5").unwrap();
    assert_eq!(c.list_max_listpack_size, 5);
    assert!(c.set_from_str("save", "1 2 3").is_err());
    c.set_from_str("save", "").unwrap();
    assert!(c.save_params.is_empty());
}

#[test]
fn command_line_builds_redis_options() {
    let args: Vec<String> = ["--port", "7000", "--save", "900 1", "--hz", "20"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    let (c, file) = Config::from_args(&args).unwrap();
    assert_eq!((c.port, c.hz, file.as_str()), (7000, 20, ""));
    assert_eq!(c.save_params, vec![(900, 1)]);
    let bad: Vec<String> = ["--port", "7000", "--nosuch", "1"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    let err = Config::from_args(&bad).unwrap_err();
    assert!(
        err.contains("at line 3\n>>> 'nosuch \"1\"'\nBad directive or wrong number of arguments")
    );
}

/// An empty `save` clears the points of earlier lines (setConfigSaveOption
/// resets on a single ""), in a file or from the command line; a bare
/// `--save` before another option or at the end means `--save ""`.
#[test]
fn empty_save_clears_earlier_save_points() {
    let points = |args: &[&str]| {
        let args: Vec<String> = args.iter().map(|s| s.to_string()).collect();
        Config::from_args(&args).unwrap().0.save_params
    };
    assert_eq!(points(&["--save", "900 1", "--save", ""]), vec![]);
    assert_eq!(points(&["--save", "900 1", "--save"]), vec![]);
    assert_eq!(points(&["--save", "900 1", "--save", "--hz", "20"]), vec![]);
    assert_eq!(points(&["--save", "", "--save", "5 5"]), vec![(5, 5)]);
    assert_eq!(
        points(&["--save", "900 1", "--save", "60 2"]),
        vec![(900, 1), (60, 2)]
    );
    let file = std::env::temp_dir().join(format!("save-{}.conf", std::process::id()));
    std::fs::write(&file, "save 900 1\nsave \"\"\n").unwrap();
    assert_eq!(points(&[file.to_str().unwrap()]), vec![]);
    assert_eq!(
        points(&[file.to_str().unwrap(), "--save", "7 7"]),
        vec![(7, 7)]
    );
    let _ = std::fs::remove_file(&file);
}

#[test]
fn repr_and_memory_format() {
    assert_eq!(repr("a\"b c"), "\"a\\\"b c\"");
    assert_eq!(format_memory(100 << 20), "100mb");
    assert_eq!(format_memory(1000), "1000");
    assert_eq!(trim_double(99.9), "99.9");
    assert_eq!(trim_double(50.0), "50");
}
