//! The memory-over-time chart's drawing, shared by the page's chart of a predicted run and the
//! snapshot worker's chart of a recorded one: a plot (SVG stretched to the chart's width) with
//! a few round GiB grid lines, the allocated bytes as an area and a line, the reserved as a
//! dashed line, under an overlay of words and marks positioned in percent, never scaled.

use estimator::decimal::{Fixed, Shortest};
use vramfit_i18n::format;

use crate::escape;

pub const WIDTH: f64 = 800.0;
pub const HEIGHT: f64 = 240.0;
/// The plot's margins: room for the labels above its highest line and below its axis.
pub const TOP: f64 = 26.0;
pub const BOTTOM: f64 = 18.0;

const GIB: f64 = (1u64 << 30) as f64;

/// A round step for about four grid lines, the first of ¼, ½, 1, 2, 5, 10, 20, 50 … GiB at
/// least `raw`.
fn tick_step(raw: f64) -> f64 {
    if raw <= 0.25 {
        return 0.25;
    }
    if raw <= 0.5 {
        return 0.5;
    }
    let mut unit = 1.0;
    // past any card's memory (and for a NaN), one step is enough
    while unit < 1e6 {
        for m in [1.0, 2.0, 5.0] {
            if unit * m >= raw {
                return unit * m;
            }
        }
        unit *= 10.0;
    }
    1e6
}

/// An SVG coordinate: a tenth of a unit is finer than a pixel at any width the chart is shown.
pub fn px(x: f64) -> Fixed {
    Fixed(x, 1)
}

/// The y of `b` bytes on a plot whose top edge is `top` bytes.
pub fn y_at(top: f64, b: u128) -> f64 {
    TOP + (HEIGHT - TOP - BOTTOM) * (1.0 - b as f64 / top)
}

/// An x on the plot as a percentage of its width, a y of its height: where the overlay's words
/// and marks go.
pub fn pct_of(x: f64, y: f64) -> (Fixed, Fixed) {
    (px(x / WIDTH * 100.0), px(y / HEIGHT * 100.0))
}

/// The y axis for a plot `top` bytes high: a few round GiB values, each a grid line (the plot's
/// SVG) with its label at the left (the overlay's).
pub fn grid(top: f64) -> (String, String) {
    let (mut svg, mut overlay) = (String::new(), String::new());
    let step = tick_step(top / GIB / 4.0);
    let places = if step < 1.0 { 2 } else { 0 };
    let mut tick = step;
    while tick * GIB < top {
        let y = y_at(top, (tick * GIB) as u128);
        svg += &across("chart__grid", y);
        overlay += &format!(
            "<text class=\"chart__label chart__tick\" x=\"2\" y=\"{}%\" dy=\"-3\">{} GiB</text>",
            pct_of(0.0, y).1,
            escape(&format::decimal(tick, places))
        );
        tick += step;
    }
    (svg, overlay)
}

/// A line across the plot at `y`, of CSS class `class` (a grid line, the usable memory).
pub fn across(class: &str, y: f64) -> String {
    format!(
        "<line class=\"{class}\" x1=\"0\" x2=\"{}\" y1=\"{}\" y2=\"{}\"/>",
        Shortest(WIDTH),
        px(y),
        px(y)
    )
}

/// The allocated bytes of `env` as a filled area and a line, the reserved as a line above it.
pub fn lines(env: &[(u128, u128)], top: f64) -> String {
    let x_of = |i: f64| i / env.len().max(1) as f64 * WIDTH;
    let points = |pick: &dyn Fn(&(u128, u128)) -> u128| -> String {
        env.iter()
            .enumerate()
            .map(|(i, p)| format!("{},{}", px(x_of(i as f64 + 0.5)), px(y_at(top, pick(p)))))
            .collect::<Vec<_>>()
            .join(" ")
    };
    let alloc_pts = points(&|p| p.0);
    let base = px(y_at(top, 0));
    format!(
        "<polygon class=\"chart__area\" points=\"{},{base} {alloc_pts} {},{base}\"/>\
         <polyline class=\"chart__reserved\" points=\"{}\"/>\
         <polyline class=\"chart__allocated\" points=\"{alloc_pts}\"/>",
        px(x_of(0.5)),
        px(x_of(env.len() as f64 - 0.5)),
        points(&|p| p.1)
    )
}

/// The plot (`svg`, stretched to the chart's width) under its `overlay` of words and marks,
/// labelled by the element `title_id`.
pub fn plot(svg: &str, overlay: &str, title_id: &str) -> String {
    format!(
        "<div class=\"chart__plot\">\
         <svg class=\"chart__svg\" viewBox=\"0 0 {} {}\" role=\"img\" aria-labelledby=\"{title_id}\" preserveAspectRatio=\"none\">{svg}</svg>\
         <svg class=\"chart__overlay\" aria-hidden=\"true\">{overlay}</svg></div>",
        Shortest(WIDTH),
        Shortest(HEIGHT)
    )
}

/// The bytes at a plot's top edge: its highest point or the usable memory, whichever is higher,
/// with room above it for the labels.
pub fn plot_top(env: &[(u128, u128)], budget: u128) -> f64 {
    env.iter()
        .map(|(a, r)| (*a).max(*r))
        .max()
        .unwrap_or(1)
        .max(budget)
        .max(1) as f64
        * 1.08
}

/// A stage's memory over its run, small (a plan's table cell): allocated as an area and a line,
/// reserved dashed, the usable memory as a line; `label` names it for assistive technology.
pub fn sparkline(profile: &[(u128, u128)], budget: u128, label: &str) -> String {
    if profile.is_empty() {
        return String::new();
    }
    let top = plot_top(profile, budget);
    format!(
        "<svg class=\"plan__spark\" viewBox=\"0 0 {} {}\" preserveAspectRatio=\"none\" role=\"img\" aria-label=\"{}\">{}{}</svg>",
        Shortest(WIDTH),
        Shortest(HEIGHT),
        escape(label),
        across("chart__budget", y_at(top, budget)),
        lines(profile, top)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ticks_are_round() {
        assert_eq!(tick_step(0.1), 0.25);
        assert_eq!(tick_step(0.3), 0.5);
        assert_eq!(tick_step(0.8), 1.0);
        assert_eq!(tick_step(2.2), 5.0);
        assert_eq!(tick_step(17.0), 20.0);
        assert_eq!(tick_step(f64::MAX), 1e6);
        assert_eq!(tick_step(f64::NAN), 1e6);
    }
}
