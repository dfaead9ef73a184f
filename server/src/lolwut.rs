//! LOLWUT: computer art and the server version (Redis's lolwut.c,
//! lolwut5.c, lolwut6.c in one file).
//!
//! Each Redis major version draws something new. 7.0 has no piece of its
//! own, so plain `LOLWUT` answers `Redis ver. 7.0.15`; `VERSION 5` draws
//! Georg Nees's "Schotter" in Braille characters and `VERSION 6` a city
//! skyline in four ANSI grays. The reply is a verbatim string ("txt").
//!
//! The drawing is the same arithmetic as Redis's, in the same `float`
//! (f32) and `double` (f64) steps, so a drawing without randomness (the top
//! two rows of Schotter, i.e. any VERSION 5 with squares-per-col <= 2) is
//! byte-identical to redis-server's. The random parts use C's `rand()`
//! range (0..=RAND_MAX) from the server's RNG: Redis seeds rand() from the
//! time and pid, so no two servers draw the same random squares anyway.

use crate::networking::Client;
use crate::server::{Server, REDIS_VERSION};
use crate::shared;

/// RAND_MAX of glibc: rand() returns 0..=RAND_MAX.
const RAND_MAX: i32 = 2147483647;

/// Redis divides by this truncated sqrt(2), not by SQRT_2: the exact
/// constant would move some corners by a pixel.
#[allow(clippy::approx_constant)]
const LOLWUT_SQRT2: f64 = 1.4142135623;

/// rand(): a non-negative int, as C's.
fn c_rand() -> i32 {
    (rand::random::<u32>() >> 1) as i32
}

/// lwCanvas: a width x height grid of colors (0/1 for version 5, four
/// grays for version 6). One byte per pixel, as Redis: the largest canvas
/// the limits allow (VERSION 5 1000 1 200) is Redis's size too.
pub struct LwCanvas {
    width: i32,
    height: i32,
    pixels: Vec<u8>,
}

impl LwCanvas {
    /// lwCreateCanvas
    fn new(width: i32, height: i32, bgcolor: u8) -> LwCanvas {
        let len = width.max(0) as usize * height.max(0) as usize;
        LwCanvas {
            width,
            height,
            pixels: vec![bgcolor; len],
        }
    }

    /// lwDrawPixel: writes outside the canvas are ignored.
    fn draw_pixel(&mut self, x: i32, y: i32, color: u8) {
        if x < 0 || x >= self.width || y < 0 || y >= self.height {
            return;
        }
        self.pixels[(x + y * self.width) as usize] = color;
    }

    /// lwGetPixel: outside the canvas reads as 0.
    fn get_pixel(&self, x: i32, y: i32) -> u8 {
        if x < 0 || x >= self.width || y < 0 || y >= self.height {
            return 0;
        }
        self.pixels[(x + y * self.width) as usize]
    }

    /// lwDrawLine: Bresenham from (x1,y1) to (x2,y2).
    fn draw_line(&mut self, mut x1: i32, mut y1: i32, x2: i32, y2: i32, color: u8) {
        let (dx, dy) = ((x2 - x1).abs(), (y2 - y1).abs());
        let sx = if x1 < x2 { 1 } else { -1 };
        let sy = if y1 < y2 { 1 } else { -1 };
        let mut err = dx - dy;
        loop {
            self.draw_pixel(x1, y1, color);
            if x1 == x2 && y1 == y2 {
                break;
            }
            let e2 = err * 2;
            if e2 > -dy {
                err -= dy;
                x1 += sx;
            }
            if e2 < dx {
                err += dx;
                y1 += sy;
            }
        }
    }

    /// lwDrawSquare: a square of side `size` centred on (x,y), rotated by
    /// `angle`: its corners are on the circle through sin/cos, starting at
    /// 45 degrees. The f32/f64 mix is C's (float variables, double math).
    fn draw_square(&mut self, x: i32, y: i32, size: f32, angle: f32, color: u8) {
        // The square inscribed in a circle of radius 1 has side sqrt(2).
        let size = (f64::from(size) / LOLWUT_SQRT2) as f32;
        let size = f64::from(size).round() as f32;
        let (mut px, mut py) = ([0i32; 4], [0i32; 4]);
        let mut k = (std::f64::consts::PI / 4.0 + f64::from(angle)) as f32;
        for j in 0..4 {
            px[j] = (f64::from(k).sin() * f64::from(size) + f64::from(x)).round() as i32;
            py[j] = (f64::from(k).cos() * f64::from(size) + f64::from(y)).round() as i32;
            k = (f64::from(k) + std::f64::consts::PI / 2.0) as f32;
        }
        for j in 0..4 {
            self.draw_line(px[j], py[j], px[(j + 1) % 4], py[(j + 1) % 4], color);
        }
    }
}

/// LOLWUT [VERSION version] [version-specific arguments ...]
// redis: lolwut.c lolwutCommand
pub fn lolwut_command(_srv: &mut Server, c: &mut Client) {
    // Without VERSION it is this server's version: 7, which has no art.
    let mut ver: u32 = 7;
    let mut args: Vec<bytes::Bytes> = c.argv[1..].to_vec();
    if c.argc() >= 3 && c.arg(1).eq_ignore_ascii_case(b"version") {
        let Some(v) = storage::util::string2ll(c.arg(2)) else {
            return c.add_reply_error(shared::NOT_INTEGER_ERR);
        };
        // Redis prints "%u.0.0" of (unsigned int)ver and looks at the first
        // characters: "5." draws version 5, "6." version 6.
        ver = v as u32;
        args.drain(..2);
    }
    match ver {
        5 => lolwut5_command(c, &args),
        6 => lolwut6_command(c, &args),
        _ => lolwut_unstable_command(c),
    }
}

/// lolwutUnstableCommand: no art, the version.
fn lolwut_unstable_command(c: &mut Client) {
    let rendered = format!("Redis ver. {REDIS_VERSION}\n");
    c.add_reply_verbatim(rendered.as_bytes());
}

/// The optional numeric arguments: getLongFromObjectOrReply for each one
/// present, `defaults` for the rest, each clamped to `min..=max`.
fn parse_lolwut_args<const N: usize>(
    c: &mut Client,
    args: &[bytes::Bytes],
    defaults: [i64; N],
    limits: [(i64, i64); N],
) -> Option<[i64; N]> {
    let mut v = defaults;
    for (i, a) in args.iter().take(N).enumerate() {
        match storage::util::string2ll(a) {
            Some(n) => v[i] = n,
            None => {
                c.add_reply_error(shared::NOT_INTEGER_ERR);
                return None;
            }
        }
    }
    // Limits: LOLWUT stays reasonably cheap whatever is asked.
    for (x, (lo, hi)) in v.iter_mut().zip(limits) {
        *x = (*x).clamp(lo, hi);
    }
    Some(v)
}

// ---- Version 5: Schotter (lolwut5.c) ----

/// lwTranslatePixelsGroup: 8 pixels (a 2x4 cell) as one Braille character,
/// U+2800 + bits, in UTF-8 (three bytes).
fn lw_translate_pixels_group(byte: u32, out: &mut Vec<u8>) {
    let code = 0x2800 + byte;
    out.push((0xE0 | (code >> 12)) as u8);
    out.push((0x80 | ((code >> 6) & 0x3F)) as u8);
    out.push((0x80 | (code & 0x3F)) as u8);
}

/// lwDrawSchotter: squares_per_row x squares_per_col squares, in order at
/// the top and ever more rotated and displaced further down.
pub fn lw_draw_schotter(console_cols: i32, squares_per_row: i32, squares_per_col: i32) -> LwCanvas {
    let canvas_width = console_cols * 2;
    let padding = if canvas_width > 4 { 2 } else { 0 };
    let square_side = (canvas_width - padding * 2) as f32 / squares_per_row as f32;
    let canvas_height = (square_side * squares_per_col as f32 + (padding * 2) as f32) as i32;
    let mut canvas = LwCanvas::new(canvas_width, canvas_height, 0);
    for y in 0..squares_per_col {
        for x in 0..squares_per_row {
            let mut sx = (x as f32 * square_side + square_side / 2.0 + padding as f32) as i32;
            let mut sy = (y as f32 * square_side + square_side / 2.0 + padding as f32) as i32;
            // Rotate and translate randomly as we go down to lower rows.
            let mut angle: f32 = 0.0;
            if y > 1 {
                let rnd = || c_rand() as f32 / RAND_MAX as f32 / squares_per_col as f32 * y as f32;
                let (mut r1, mut r2, mut r3) = (rnd(), rnd(), rnd());
                if c_rand() % 2 != 0 {
                    r1 = -r1;
                }
                if c_rand() % 2 != 0 {
                    r2 = -r2;
                }
                if c_rand() % 2 != 0 {
                    r3 = -r3;
                }
                angle = r1;
                sx = (sx as f32 + r2 * square_side / 3.0) as i32;
                sy = (sy as f32 + r3 * square_side / 3.0) as i32;
            }
            canvas.draw_square(sx, sy, square_side, angle, 1);
        }
    }
    canvas
}

/// renderCanvas (lolwut5.c): Braille cells of 2x4 pixels, one text line
/// per 4 pixel rows. The pixel-to-bit layout is Braille's:
/// ```text
///   0 3
///   1 4
///   2 5
///   6 7
/// ```
fn render_canvas5(canvas: &LwCanvas) -> Vec<u8> {
    let mut text = Vec::new();
    let mut y = 0;
    while y < canvas.height {
        let mut x = 0;
        while x < canvas.width {
            let bits = [
                (x, y, 0),
                (x, y + 1, 1),
                (x, y + 2, 2),
                (x + 1, y, 3),
                (x + 1, y + 1, 4),
                (x + 1, y + 2, 5),
                (x, y + 3, 6),
                (x + 1, y + 3, 7),
            ];
            let mut byte = 0;
            for (px, py, bit) in bits {
                if canvas.get_pixel(px, py) != 0 {
                    byte |= 1 << bit;
                }
            }
            lw_translate_pixels_group(byte, &mut text);
            x += 2;
        }
        // Redis's test (y != height-1) with y stepping by 4: nearly every
        // line, the last one too, ends in a newline.
        if y != canvas.height - 1 {
            text.push(b'\n');
        }
        y += 4;
    }
    text
}

/// LOLWUT VERSION 5 [columns] [squares-per-row] [squares-per-col]
// redis: lolwut5.c lolwut5Command
fn lolwut5_command(c: &mut Client, args: &[bytes::Bytes]) {
    let Some([cols, per_row, per_col]) =
        parse_lolwut_args(c, args, [66, 8, 12], [(1, 1000), (1, 200), (1, 200)])
    else {
        return;
    };
    let canvas = lw_draw_schotter(cols as i32, per_row as i32, per_col as i32);
    let mut rendered = render_canvas5(&canvas);
    rendered.extend_from_slice(
        format!("\nGeorg Nees - schotter, plotter on paper, 1968. Redis ver. {REDIS_VERSION}\n")
            .as_bytes(),
    );
    c.add_reply_verbatim(&rendered);
}

// ---- Version 6: a skyline (lolwut6.c) ----

/// One building of the skyline (struct skyscraper).
struct Skyscraper {
    xoff: i32,
    width: i32,
    height: i32,
    /// Draw windows (the foreground buildings).
    windows: bool,
    color: u8,
}

/// generateSkyscraper: a building standing on the bottom row, its roof two
/// pixels narrower on each side, windows two pixels wide and one tall in
/// a random gray.
fn generate_skyscraper(canvas: &mut LwCanvas, si: &Skyscraper) {
    let starty = canvas.height - 1;
    let endy = starty - si.height + 1;
    let mut y = starty;
    while y >= endy {
        for x in si.xoff..si.xoff + si.width {
            // The roof is four pixels less wide.
            if y == endy && (x <= si.xoff + 1 || x >= si.xoff + si.width - 2) {
                continue;
            }
            let mut color = si.color;
            // Windows only in the inner part, far from the borders.
            if si.windows
                && x > si.xoff + 1
                && x < si.xoff + si.width - 2
                && y > endy + 1
                && y < starty - 1
            {
                let relx = x - (si.xoff + 1);
                let rely = y - (endy + 1);
                if (relx / 2) % 2 != 0 && rely % 2 != 0 {
                    loop {
                        color = (1 + c_rand() % 2) as u8;
                        if color != si.color {
                            break;
                        }
                    }
                    // Both pixels of one window have the same color.
                    if relx % 2 != 0 {
                        color = canvas.get_pixel(x - 1, y);
                    }
                }
            }
            canvas.draw_pixel(x, y, color);
        }
        y -= 1;
    }
}

/// generateSkyline: two passes of background buildings without windows
/// (the lighter gray first, so it stays behind), then the black foreground
/// buildings with windows.
fn generate_skyline(canvas: &mut LwCanvas) {
    let h = canvas.height;
    for color in [2u8, 1] {
        let mut offset = -10;
        while offset < canvas.width {
            offset += c_rand() % 8;
            let width = 10 + c_rand() % 9;
            let height = if color == 2 {
                h / 2 + c_rand() % h / 2
            } else {
                h / 2 + c_rand() % h / 3
            };
            let si = Skyscraper {
                xoff: offset,
                width,
                height,
                windows: false,
                color,
            };
            generate_skyscraper(canvas, &si);
            offset += if color == 2 { width / 2 } else { width + 1 };
        }
    }
    let mut offset = -10;
    while offset < canvas.width {
        offset += c_rand() % 8;
        let mut width = 5 + c_rand() % 14;
        if width % 4 != 0 {
            width += width % 3;
        }
        let si = Skyscraper {
            xoff: offset,
            width,
            height: h / 3 + c_rand() % h / 2,
            windows: true,
            color: 0,
        };
        generate_skyscraper(canvas, &si);
        offset += width + 5;
    }
}

/// renderCanvas (lolwut6.c): one space per pixel, its foreground and
/// background set to one of the four terminal grays.
fn render_canvas6(canvas: &LwCanvas) -> Vec<u8> {
    let mut text = Vec::new();
    for y in 0..canvas.height {
        for x in 0..canvas.width {
            let ce: &[u8] = match canvas.get_pixel(x, y) {
                1 => b"0;90;100m", // Gray 1
                2 => b"0;37;47m",  // Gray 2
                3 => b"0;97;107m", // White
                _ => b"0;30;40m",  // Black
            };
            text.extend_from_slice(b"\x1b[");
            text.extend_from_slice(ce);
            text.extend_from_slice(b" \x1b[0m");
        }
        if y != canvas.height - 1 {
            text.push(b'\n');
        }
    }
    text
}

/// LOLWUT VERSION 6 [columns] [rows]
// redis: lolwut6.c lolwut6Command
fn lolwut6_command(c: &mut Client, args: &[bytes::Bytes]) {
    let Some([cols, rows]) = parse_lolwut_args(c, args, [80, 20], [(1, 1000), (1, 1000)]) else {
        return;
    };
    let mut canvas = LwCanvas::new(cols as i32, rows as i32, 3);
    generate_skyline(&mut canvas);
    let mut rendered = render_canvas6(&canvas);
    rendered.extend_from_slice(
        format!(
            "\nDedicated to the 8 bit game developers of past and present.\n\
             Original 8 bit image from Plaguemon by hikikomori. Redis ver. {REDIS_VERSION}\n"
        )
        .as_bytes(),
    );
    c.add_reply_verbatim(&rendered);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn braille_cell_is_three_utf8_bytes() {
        let mut out = Vec::new();
        lw_translate_pixels_group(0xFF, &mut out);
        assert_eq!(std::str::from_utf8(&out).unwrap(), "\u{28FF}");
    }

    #[test]
    fn schotter_top_rows_are_unrotated_squares() {
        // One square per row, two rows: no randomness at all.
        let canvas = lw_draw_schotter(4, 1, 2);
        assert_eq!((canvas.width, canvas.height), (8, 12));
        let a = render_canvas5(&canvas);
        assert_eq!(a, render_canvas5(&lw_draw_schotter(4, 1, 2)));
    }
}
