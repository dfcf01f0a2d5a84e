//! Charts as SVG, for the figures the tasks measure (the load test's shares of `pgbench -S`).

use std::path::Path;

use anyhow::{Result, anyhow};
use plotters::prelude::*;

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
}
