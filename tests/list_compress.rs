//! list-compress-depth: quicklist nodes past the depth are LZF-compressed,
//! as in Redis 7.0. Compression is invisible to list commands, so these
//! tests compare what it does show with a real redis-server after the same
//! commands: MEMORY USAGE (a compressed node is counted as its LZF block),
//! DEBUG OBJECT's quicklist fields, the DUMP payload (a compressed node is
//! saved as its LZF block, with or without rdbcompression), the contents
//! after edits in the middle, and a DEBUG RELOAD.

mod common;

use common::Conn;

fn text(r: &[u8]) -> String {
    String::from_utf8_lossy(r).into_owned()
}

/// DEBUG OBJECT without the address and the LRU fields.
fn debug_object(c: &mut Conn, key: &str) -> String {
    text(&c.must(&["DEBUG", "OBJECT", key]))
        .split(' ')
        .filter(|f| !f.starts_with("at:") && !f.starts_with("lru"))
        .collect::<Vec<_>>()
        .join(" ")
}

fn snapshot(c: &mut Conn, key: &str) -> Vec<String> {
    vec![
        debug_object(c, key),
        text(&c.must(&["MEMORY", "USAGE", key])),
        common::escape(&c.must(&["DUMP", key])),
        common::escape(&c.must(&["LRANGE", key, "0", "-1"])),
    ]
}

#[test]
fn compressed_lists_read_save_and_measure_like_redis() {
    let seen = common::run_on_both(|p| {
        let mut c = p.connect();
        let mut out = Vec::new();
        for (depth, fill, key) in [("1", "4", "l1"), ("2", "4", "l2"), ("1", "-2", "l3")] {
            c.must(&["CONFIG", "SET", "list-compress-depth", depth]);
            c.must(&["CONFIG", "SET", "list-max-listpack-size", fill]);
            for i in 0..300 {
                let v = format!("{}{i}", "x".repeat(60 + i % 7));
                c.must(&["RPUSH", key, &v]);
            }
            out.extend(snapshot(&mut c, key));
            // Edits in the middle decompress nodes and compress them again.
            let pivot = format!("{}100", "x".repeat(60 + 100 % 7));
            c.must(&["LINSERT", key, "BEFORE", &pivot, "inserted"]);
            c.must(&["LSET", key, "150", &"z".repeat(90)]);
            let gone = format!("{}200", "x".repeat(60 + 200 % 7));
            c.must(&["LREM", key, "1", &gone]);
            c.must(&["LTRIM", key, "3", "-4"]);
            c.must(&["LPUSH", key, "head"]);
            c.must(&["RPOP", key, "5"]);
            out.push(text(&c.must(&["LINDEX", key, "120"])));
            out.push(text(&c.must(&["LPOS", key, "inserted"])));
            out.extend(snapshot(&mut c, key));
        }
        // The same 300 elements in a list without compression.
        c.must(&["CONFIG", "SET", "list-compress-depth", "0"]);
        c.must(&["CONFIG", "SET", "list-max-listpack-size", "4"]);
        for i in 0..300 {
            let v = format!("{}{i}", "x".repeat(60 + i % 7));
            c.must(&["RPUSH", "l0", &v]);
        }
        out.push(text(&c.must(&["MEMORY", "USAGE", "l0"])));
        // Compressed nodes are saved as LZF even without rdbcompression.
        c.must(&["CONFIG", "SET", "rdbcompression", "no"]);
        out.push(common::escape(&c.must(&["DUMP", "l1"])));
        c.must(&["CONFIG", "SET", "rdbcompression", "yes"]);
        let digest = c.must(&["DEBUG", "DIGEST"]);
        c.must(&["DEBUG", "RELOAD"]);
        assert_eq!(c.must(&["DEBUG", "DIGEST"]), digest);
        for key in ["l1", "l2", "l3"] {
            out.extend(snapshot(&mut c, key));
        }
        out
    });
    // The depth shows in DEBUG OBJECT, and compression paid off: the
    // compressed list takes less memory than the same list uncompressed.
    assert!(seen[0].contains("ql_compressed:1"), "{}", seen[0]);
    let usage = |s: &str| -> usize { s.trim_start_matches(':').trim().parse().unwrap() };
    let compressed = usage(&seen[1]);
    // 3 lists x (snapshot, LINDEX, LPOS, snapshot) = 30 entries first.
    let uncompressed = usage(&seen[30]);
    assert!(
        compressed * 3 < uncompressed * 2,
        "{compressed} vs {uncompressed}"
    );
}
