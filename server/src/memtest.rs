//! `redis-lite --test-memory <megabytes>`: Redis's memtest.c, a quick RAM
//! check for "is this crash a bad DIMM?" (the bug report suggests it).
//!
//! It allocates the memory and runs 50 passes of: addressing (every word
//! holds its own address), then random, solid and checkerboard fills, each
//! compared 4 times. Fills write the two halves of the area identically,
//! one word per page per step, so caches help as little as possible; the
//! compare reads both halves. A progress bar fills the terminal as in
//! Redis; the first mismatch prints the addresses and exits 1.

use std::io::Write;

/// ULONG_ONEZERO / ULONG_ZEROONE: the checkerboard patterns.
const ULONG_ONEZERO: u64 = 0xaaaa_aaaa_aaaa_aaaa;
const ULONG_ZEROONE: u64 = 0x5555_5555_5555_5555;

/// One words-per-page step: 4096 bytes.
const STEP: usize = 4096 / 8;

struct Progress {
    cols: usize,
    rows: usize,
    printed: usize,
    full: usize,
}

impl Progress {
    fn start(&mut self, title: &str, pass: usize) {
        let mut out = std::io::stdout().lock();
        let _ = write!(out, "\x1b[H\x1b[2J");
        let dots = ".".repeat(self.cols * self.rows.saturating_sub(2));
        let _ = write!(out, "{dots}");
        let _ = writeln!(
            out,
            "Please keep the test running several minutes per GB of memory."
        );
        let _ = write!(
            out,
            "Also check http://www.memtest86.com/ and http://pyropus.ca/software/memtester/"
        );
        let _ = write!(out, "\x1b[H\x1b[2K");
        let _ = writeln!(out, "{title} [{pass}]");
        self.printed = 0;
        self.full = self.cols * self.rows.saturating_sub(3);
        let _ = out.flush();
    }

    fn end(&self) {
        print!("\x1b[H\x1b[2J");
    }

    fn step(&mut self, curr: usize, size: usize, c: char) {
        let chars = curr * self.full / size.max(1);
        if chars > self.printed {
            let mut out = std::io::stdout().lock();
            let _ = write!(out, "{}", c.to_string().repeat(chars - self.printed));
            let _ = out.flush();
            self.printed = chars;
        }
    }
}

fn addressing(m: &mut [u64], p: &mut Progress) {
    let words = m.len();
    for (j, w) in m.iter_mut().enumerate() {
        *w = w as *mut u64 as u64;
        if j & 0xffff == 0 {
            p.step(j, words * 2, 'A');
        }
    }
    for (j, w) in m.iter().enumerate() {
        if *w != w as *const u64 as u64 {
            println!(
                "\n*** MEMORY ADDRESSING ERROR: {:p} contains {}",
                w as *const u64, *w
            );
            std::process::exit(1);
        }
        if j & 0xffff == 0 {
            p.step(j + words, words * 2, 'A');
        }
    }
}

/// Fill both halves identically, `value(off, w)` for the word `w` pages
/// into the half at offset `off` in its page.
fn fill(m: &mut [u64], p: &mut Progress, sym: char, mut value: impl FnMut(usize) -> u64) {
    let words = m.len() / 2;
    let iwords = words / STEP;
    let (a, b) = m.split_at_mut(words);
    for off in 0..STEP {
        for w in 0..iwords {
            let v = value(off);
            a[off + w * STEP] = v;
            b[off + w * STEP] = v;
            if w & 0xffff == 0 {
                p.step(w + iwords * off, words, sym);
            }
        }
    }
}

fn compare_times(m: &[u64], p: &mut Progress, pass: usize) {
    let words = m.len() / 2;
    for _ in 0..4 {
        p.start("Compare", pass);
        let (a, b) = m.split_at(words);
        for (w, (x, y)) in a.iter().zip(b).enumerate() {
            if x != y {
                println!(
                    "\n*** MEMORY ERROR DETECTED: {:p} != {:p} ({x} vs {y})",
                    x as *const u64, y as *const u64
                );
                std::process::exit(1);
            }
            if w & 0xffff == 0 {
                p.step(w, words, '=');
            }
        }
        p.end();
    }
}

/// memtest: test `megabytes` of RAM, `passes` times; exits.
// redis: memtest.c memtest
pub fn memtest(megabytes: usize, passes: usize) -> ! {
    // SAFETY: TIOCGWINSZ fills the winsize we pass.
    let mut ws: libc::winsize = unsafe { std::mem::zeroed() };
    let (cols, rows) = if unsafe { libc::ioctl(1, libc::TIOCGWINSZ, &mut ws) } == -1 {
        (80, 20)
    } else {
        (ws.ws_col as usize, ws.ws_row as usize)
    };
    let mut p = Progress {
        cols,
        rows,
        printed: 0,
        full: 0,
    };
    let words = megabytes * 1024 * 1024 / 8;
    let mut m: Vec<u64> = Vec::new();
    if m.try_reserve_exact(words).is_err() {
        eprint!(
            "Unable to allocate {megabytes} megabytes: {}",
            std::io::Error::from_raw_os_error(libc::ENOMEM)
        );
        std::process::exit(1);
    }
    m.resize(words, 0);
    for pass in 1..=passes {
        p.start("Addressing test", pass);
        addressing(&mut m, &mut p);
        p.end();

        p.start("Random fill", pass);
        // xorshift64*: no library calls, only local state.
        let mut rseed: u64 = 0xd131_33de_9afd_b566;
        fill(&mut m, &mut p, 'R', |_| {
            rseed ^= rseed >> 12;
            rseed ^= rseed << 25;
            rseed ^= rseed >> 27;
            rseed.wrapping_mul(2685821657736338717)
        });
        p.end();
        compare_times(&m, &mut p, pass);

        p.start("Solid fill", pass);
        fill(
            &mut m,
            &mut p,
            'S',
            |off| if off & 1 == 1 { u64::MAX } else { 0 },
        );
        p.end();
        compare_times(&m, &mut p, pass);

        p.start("Checkerboard fill", pass);
        fill(&mut m, &mut p, 'C', |off| {
            if off & 1 == 1 {
                ULONG_ZEROONE
            } else {
                ULONG_ONEZERO
            }
        });
        p.end();
        compare_times(&m, &mut p, pass);
    }
    println!("\nYour memory passed this test.");
    println!("Please if you are still in doubt use the following two tools:");
    println!("1) memtest86: http://www.memtest86.com/");
    println!("2) memtester: http://pyropus.ca/software/memtester/");
    std::process::exit(0);
}
