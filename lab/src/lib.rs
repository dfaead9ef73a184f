//! redis-lite-lab: the five experiments of `shared/experiments.md` (from the
//! posts in `shared/seeds/`), run against redis-lite and, with `--compare`,
//! a real Redis side by side.
//!
//! | module | what |
//! |---|---|
//! | `target` | starting / finding the servers, their identity and config |
//! | `victim` | victim threads: GET a hot key, record each reply time |
//! | `stats` | windows over samples, p50/p99/max/count-over, medians, ratios |
//! | `proxy` | the delaying TCP proxy (`--rtt-ms`) that stands in for netem |
//! | `report` | tables, lesson lines, progress bars |
//! | `plot` | SVG timelines, bars and lines (plotters) |
//! | `cleanup` | Ctrl-C: stop what the lab started, wipe what it wrote |
//! | `trace` | `--trace DIR`: the server's loop flight recorder around each experiment, its stalls as an SVG timeline |
//! | `top` | `top`: the worst blockers (DEBUG BLAME), live |
//! | `exp::*` | probe (E1), victims (E2), monitor (E3), roundtrips (E4), scancount (E5) |

pub mod cleanup;
pub mod exp;
pub mod plot;
pub mod proxy;
pub mod report;
pub mod stats;
pub mod target;
pub mod top;
pub mod trace;
pub mod victim;
