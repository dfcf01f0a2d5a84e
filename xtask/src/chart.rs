//! Charts as SVG, for the figures the tasks measure: bars (the load test's shares of `pgbench
//! -S`) and curves over time (the soak's), as figures of panels sharing one x axis.

use std::path::Path;

use anyhow::{Result, anyhow};
use plotters::prelude::*;

/// One line: a name for the legend and its points (x, y).
pub struct Series {
    pub name: String,
    pub points: Vec<(f64, f64)>,
}

/// One chart of a figure of curves: its title, the unit of its y axis and its lines.
pub struct Panel {
    pub title: String,
    pub unit: String,
    pub series: Vec<Series>,
}

/// One row of bars: a request, its value in each run, and its goal if it has one.
pub struct BarGroup {
    pub label: String,
    pub values: Vec<f64>,
    pub goal: Option<f64>,
}

const WIDTH: u32 = 960;
const TITLE_HEIGHT: u32 = 40;
const ROW_HEIGHT: u32 = 34;
const LABEL_WIDTH: u32 = 200;
const PANEL_HEIGHT: u32 = 260;

/// Writes a horizontal bar chart to `path`: a row per group, top to bottom, with a bar per run
/// (named in `runs`, in the legend), the value axis labelled `unit` and starting at zero, and
/// each group's goal as a black tick.
pub fn write_bars_svg(
    path: &Path,
    title: &str,
    unit: &str,
    runs: &[&str],
    groups: &[BarGroup],
) -> Result<()> {
    let rows = u32::try_from(groups.len())?;
    let height = TITLE_HEIGHT + 80 + ROW_HEIGHT * rows;
    let x_max = groups
        .iter()
        .flat_map(|group| group.values.iter().copied().chain(group.goal))
        .fold(0.0, f64::max)
        * 1.15;
    let root = SVGBackend::new(path, (WIDTH, height)).into_drawing_area();
    let drawn = (|| {
        root.fill(&WHITE)?;
        let (top, body) = root.split_vertically(TITLE_HEIGHT);
        top.titled(title, ("sans-serif", 20))?;
        // Row i (from the top) spans rows - i - 1 .. rows - i on the y axis.
        let y_of = |row: usize, offset: f64| f64::from(rows) - row as f64 - offset;
        let mut chart = ChartBuilder::on(&body)
            .margin(10)
            .x_label_area_size(36)
            .y_label_area_size(LABEL_WIDTH)
            .build_cartesian_2d(0.0..x_max.max(0.01), 0.0..f64::from(rows))?;
        chart
            .configure_mesh()
            .x_desc(unit)
            .y_labels(groups.len() * 2 + 1)
            .y_label_formatter(&|y: &f64| {
                // Labels sit at the middle of each row.
                let row = f64::from(rows) - y - 0.5;
                let index = row.round();
                match groups.get(index as usize) {
                    Some(group) if index >= 0.0 && (row - index).abs() < 1e-6 => {
                        group.label.clone()
                    }
                    _ => String::new(),
                }
            })
            .disable_y_mesh()
            .draw()?;
        let bar = 0.8 / runs.len().max(1) as f64;
        for (run, name) in runs.iter().enumerate() {
            let color = Palette99::pick(run).to_rgba();
            let bars = groups.iter().enumerate().filter_map(move |(row, group)| {
                let value = *group.values.get(run)?;
                let upper = y_of(row, 0.1 + bar * run as f64);
                Some(Rectangle::new(
                    [(0.0, upper), (value, upper - bar)],
                    color.filled(),
                ))
            });
            chart.draw_series(bars)?.label(*name).legend(move |(x, y)| {
                Rectangle::new([(x, y - 5), (x + 14, y + 5)], color.filled())
            });
        }
        let goals = groups.iter().enumerate().filter_map(|(row, group)| {
            let goal = group.goal?;
            Some(PathElement::new(
                vec![(goal, y_of(row, 0.05)), (goal, y_of(row, 0.95))],
                BLACK.stroke_width(2),
            ))
        });
        chart.draw_series(goals)?.label("goal").legend(|(x, y)| {
            PathElement::new(vec![(x + 7, y - 6), (x + 7, y + 6)], BLACK.stroke_width(2))
        });
        chart
            .configure_series_labels()
            .position(SeriesLabelPosition::LowerRight)
            .background_style(WHITE.mix(0.9))
            .border_style(BLACK)
            .draw()?;
        root.present()
    })();
    drawn.map_err(|err| anyhow!("drawing {}: {err}", path.display()))
}

/// Writes `panels` to `path` as one SVG under `title`, stacked one above the other over the
/// same x range, labelled `x_label`. A y axis starts at zero, so a flat line looks flat.
pub fn write_lines_svg(path: &Path, title: &str, x_label: &str, panels: &[Panel]) -> Result<()> {
    let height = TITLE_HEIGHT + PANEL_HEIGHT * u32::try_from(panels.len())?;
    let root = SVGBackend::new(path, (WIDTH, height)).into_drawing_area();
    let drawn = (|| {
        root.fill(&WHITE)?;
        let (top, body) = root.split_vertically(TITLE_HEIGHT);
        top.titled(title, ("sans-serif", 20))?;
        let x_max = panels
            .iter()
            .flat_map(|panel| &panel.series)
            .flat_map(|series| &series.points)
            .map(|&(x, _)| x)
            .fold(1.0, f64::max);
        for (area, panel) in body.split_evenly((panels.len(), 1)).iter().zip(panels) {
            draw_panel(area, panel, x_label, x_max)?;
        }
        root.present()
    })();
    drawn.map_err(|err| anyhow!("drawing {}: {err}", path.display()))
}

type Area<'a> = DrawingArea<SVGBackend<'a>, plotters::coord::Shift>;

fn draw_panel(
    area: &Area<'_>,
    panel: &Panel,
    x_label: &str,
    x_max: f64,
) -> Result<(), DrawingAreaErrorKind<std::io::Error>> {
    let y_max = panel
        .series
        .iter()
        .flat_map(|series| &series.points)
        .map(|&(_, y)| y)
        .filter(|y| y.is_finite())
        .fold(0.0, f64::max);
    // Headroom above the highest point, and a visible range when every value is zero.
    let y_top = if y_max > 0.0 { y_max * 1.15 } else { 1.0 };
    let mut chart = ChartBuilder::on(area)
        .caption(&panel.title, ("sans-serif", 16))
        .margin(8)
        .x_label_area_size(32)
        .y_label_area_size(70)
        .build_cartesian_2d(0.0..x_max, 0.0..y_top)?;
    chart
        .configure_mesh()
        .x_desc(x_label)
        .y_desc(&panel.unit)
        .light_line_style(WHITE.mix(0.0))
        .draw()?;
    for (index, series) in panel.series.iter().enumerate() {
        let color = Palette99::pick(index).to_rgba();
        let points = series.points.iter().copied().filter(|(_, y)| y.is_finite());
        chart
            .draw_series(LineSeries::new(points, color.stroke_width(2)))?
            .label(series.name.as_str())
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 18, y)], color));
    }
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::LowerRight)
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK)
        .draw()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bar_chart_names_every_row_and_run() -> Result<()> {
        let dir = std::env::temp_dir().join(format!("xtask-chart-{}", std::process::id()));
        std::fs::create_dir_all(&dir)?;
        let path = dir.join("bars.svg");
        let groups = [
            BarGroup {
                label: "list editedAt".into(),
                values: vec![0.18, 0.21],
                goal: Some(0.20),
            },
            BarGroup {
                label: "detail anonymous".into(),
                values: vec![0.41, 0.44],
                goal: None,
            },
        ];
        write_bars_svg(
            &path,
            "shares",
            "share of pgbench -S",
            &["before", "after"],
            &groups,
        )?;
        let svg = std::fs::read_to_string(&path)?;
        std::fs::remove_dir_all(&dir)?;
        for text in [
            "list editedAt",
            "detail anonymous",
            "before",
            "after",
            "goal",
            "shares",
        ] {
            assert!(svg.contains(text), "{text} missing from the chart");
        }
        assert!(svg.matches("<rect").count() >= 4, "a bar per run and row");
        Ok(())
    }

    #[test]
    fn a_figure_of_curves_holds_every_panel_and_line() -> Result<()> {
        let dir = std::env::temp_dir().join(format!("xtask-curves-{}", std::process::id()));
        std::fs::create_dir_all(&dir)?;
        let path = dir.join("figure.svg");
        let line = |name: &str, y: f64| Series {
            name: name.to_owned(),
            points: (0..10).map(|x| (f64::from(x), y + f64::from(x))).collect(),
        };
        write_lines_svg(
            &path,
            "A figure",
            "minutes",
            &[
                Panel {
                    title: "Memory".to_owned(),
                    unit: "MiB".to_owned(),
                    series: vec![line("RSS", 40.0)],
                },
                Panel {
                    title: "Tables".to_owned(),
                    unit: "MiB".to_owned(),
                    series: vec![line("decks", 3.0), line("deck_views", 0.0)],
                },
            ],
        )?;
        let svg = std::fs::read_to_string(&path)?;
        std::fs::remove_dir_all(&dir)?;
        for text in [
            "A figure",
            "Memory",
            "Tables",
            "RSS",
            "decks",
            "deck_views",
            "minutes",
        ] {
            assert!(svg.contains(text), "no {text:?} in the SVG");
        }
        assert!(
            svg.matches("<polyline").count() >= 3,
            "a line per series, legend marks aside"
        );
        Ok(())
    }
}
