//! `redis-lite --check-system` and the start-up warnings about the machine
//! (Redis's syscheck.c): each check reads a kernel setting that makes a
//! forking, latency-sensitive server misbehave, and says how to fix it.
//!
//! The texts are Redis 7.0.15's, word for word: they are what operators
//! search for.

/// One check's outcome: skipped (could not tell), fine, or a warning.
pub enum Check {
    Skipped,
    Ok,
    Warning(String),
}

/// The first line of a sysfs/procfs file, trimmed.
fn read_sysfs_line(path: &str) -> Option<String> {
    let text = std::fs::read_to_string(path).ok()?;
    Some(text.lines().next().unwrap_or("").trim().to_string())
}

/// checkClocksource: a clock_gettime that goes through a system call
/// instead of the vDSO shows up as system time in a 5-tick busy loop.
pub fn check_clocksource() -> Check {
    fn rusage() -> Option<libc::rusage> {
        // SAFETY: getrusage fills the struct we pass.
        unsafe {
            let mut ru: libc::rusage = std::mem::zeroed();
            (libc::getrusage(libc::RUSAGE_SELF, &mut ru) == 0).then_some(ru)
        }
    }
    fn us(t: libc::timeval) -> i64 {
        t.tv_sec * 1_000_000 + t.tv_usec
    }
    // SAFETY: sysconf has no preconditions.
    let system_hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) }.max(1) as u64;
    let Some(start) = rusage() else {
        return Check::Skipped;
    };
    let begin = std::time::Instant::now();
    let test_time = std::time::Duration::from_micros(5 * 1_000_000 / system_hz);
    while begin.elapsed() < test_time {}
    let Some(end) = rusage() else {
        return Check::Skipped;
    };
    let stime = us(end.ru_stime) - us(start.ru_stime);
    let utime = us(end.ru_utime) - us(start.ru_utime);
    if stime * 10 > stime + utime {
        let avail =
            read_sysfs_line("/sys/devices/system/clocksource/clocksource0/available_clocksource")
                .unwrap_or_default();
        let curr =
            read_sysfs_line("/sys/devices/system/clocksource/clocksource0/current_clocksource")
                .unwrap_or_default();
        return Check::Warning(format!("Slow system clocksource detected. This can result in degraded performance. Consider changing the system's clocksource. Current clocksource: {curr}. Available clocksources: {avail}. For example: run the command 'echo tsc > /sys/devices/system/clocksource/clocksource0/current_clocksource' as root. To permanently change the system's clocksource you'll need to set the 'clocksource=' kernel command line parameter."));
    }
    Check::Ok
}

/// checkXenClocksource: Xen's default clocksource is slow.
pub fn check_xen_clocksource() -> Check {
    match read_sysfs_line("/sys/devices/system/clocksource/clocksource0/current_clocksource") {
        None => Check::Skipped,
        Some(c) if c == "xen" => Check::Warning("Your system is configured to use the 'xen' clocksource which might lead to degraded performance. Check the result of the [slow-clocksource] system check: run 'redis-server --check-system' to check if the system's clocksource isn't degrading performance.".into()),
        Some(_) => Check::Ok,
    }
}

/// checkOvercommit: without overcommit, the kernel may refuse the fork of
/// a BGSAVE (it would need twice the memory, though copy-on-write never
/// uses it).
pub fn check_overcommit() -> Check {
    let Some(line) = read_sysfs_line("/proc/sys/vm/overcommit_memory") else {
        return Check::Skipped;
    };
    if line.parse::<i64>().unwrap_or(0) != 1 {
        return Check::Warning("Memory overcommit must be enabled! Without it, a background save or replication may fail under low memory condition. Being disabled, it can can also cause failures without low memory condition, see https://github.com/jemalloc/jemalloc/issues/1328. To fix this issue add 'vm.overcommit_memory = 1' to /etc/sysctl.conf and then reboot or run the command 'sysctl vm.overcommit_memory=1' for this to take effect.".into());
    }
    Check::Ok
}

/// checkTHPEnabled: transparent huge pages make every copy-on-write after
/// a fork copy 2 MB instead of 4 KB.
pub fn check_thp_enabled() -> Check {
    let Some(line) = read_sysfs_line("/sys/kernel/mm/transparent_hugepage/enabled") else {
        return Check::Skipped;
    };
    if line.contains("[always]") {
        return Check::Warning("You have Transparent Huge Pages (THP) support enabled in your kernel. This will create latency and memory usage issues with Redis. To fix this issue run the command 'echo madvise > /sys/kernel/mm/transparent_hugepage/enabled' as root, and add it to your /etc/rc.local in order to retain the setting after a reboot. Redis must be restarted after THP is disabled (set to 'madvise' or 'never').".into());
    }
    Check::Ok
}

/// syscheck: run every check, print `[name]...OK|skipped|WARNING:`; false
/// when any warned (`--check-system` then exits 1).
// redis: syscheck.c syscheck
pub fn syscheck() -> bool {
    type CheckFn = fn() -> Check;
    let checks: [(&str, CheckFn); 4] = [
        ("slow-clocksource", check_clocksource),
        ("xen-clocksource", check_xen_clocksource),
        ("overcommit", check_overcommit),
        ("THP", check_thp_enabled),
    ];
    let mut ok = true;
    for (name, check) in checks {
        let res = check();
        print!("[{name}]...");
        match res {
            Check::Skipped => println!("skipped"),
            Check::Ok => println!("OK"),
            Check::Warning(msg) => {
                println!("WARNING:");
                println!("{msg}");
                ok = false;
            }
        }
    }
    ok
}
