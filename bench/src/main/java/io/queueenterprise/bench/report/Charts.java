package io.queueenterprise.bench.report;

import io.queueenterprise.bench.harness.BenchResult;
import io.queueenterprise.bench.harness.PointResult;
import io.queueenterprise.bench.harness.SweepResult;
import org.knowm.xchart.BitmapEncoder;
import org.knowm.xchart.AnnotationTextPanel;
import org.knowm.xchart.CategoryChart;
import org.knowm.xchart.CategoryChartBuilder;
import org.knowm.xchart.XYChart;
import org.knowm.xchart.XYChartBuilder;
import org.knowm.xchart.XYSeries;
import org.knowm.xchart.style.Styler;
import org.knowm.xchart.style.lines.SeriesLines;
import org.knowm.xchart.style.markers.SeriesMarkers;

import java.awt.BasicStroke;
import java.awt.Color;
import java.awt.Font;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Function;

/** PNG charts drawn with XChart. */
public final class Charts {

    private Charts() {
    }

    /** Writes every chart and returns the file names (relative to {@code dir}). */
    public static List<String> write(BenchResult r, Path dir) throws IOException {
        System.setProperty("java.awt.headless", "true");
        List<String> files = new ArrayList<>();
        if (!r.configuration().sweep) {
            return files; // no sweep (JDK comparison or JLBH only): nothing to chart
        }
        for (int size : r.configuration().messageSizes) {
            String name = "latency-for-throughput-" + size + "B.png";
            latencyForThroughput(r, size, false, dir.resolve(name));
            files.add(name);
            String median = "latency-for-throughput-p50-" + size + "B.png";
            latencyForThroughput(r, size, true, dir.resolve(median));
            files.add(median);
        }
        String capacity = "capacity.png";
        capacity(r, dir.resolve(capacity));
        files.add(capacity);
        String bars = "highest-rate-at-bound.png";
        highestRate(r, null, dir.resolve(bars));
        files.add(bars);
        Integer sep = r.separation().stream().map(BenchResult.Separation::separationBoundUs)
                .filter(b -> b != null).max(Integer::compare).orElse(null);
        if (sep != null) {
            String name = "highest-rate-at-" + sep + "us.png";
            highestRate(r, sep, dir.resolve(name));
            files.add(name);
        }
        return files;
    }

    static void latencyForThroughput(BenchResult r, int size, boolean median, Path file) throws IOException {
        String pct = median ? "p50" : "p" + Fmt.pct(r.configuration().percentile);
        XYChart chart = new XYChartBuilder().width(1200).height(750)
                .title(String.format("Latency for throughput, %d-byte messages (%s of the worst run, open loop)", size, pct))
                .xAxisTitle("offered rate (msg/s, log)").yAxisTitle(pct + " latency (us, log)").build();
        style(chart.getStyler());
        chart.getStyler().setXAxisLogarithmic(true);
        chart.getStyler().setYAxisLogarithmic(true);
        chart.getStyler().setLegendPosition(Styler.LegendPosition.OutsideE);
        chart.getStyler().setMarkerSize(7);
        chart.getStyler().setXAxisDecimalPattern("#,###");
        chart.getStyler().setYAxisDecimalPattern("#,###.#");
        double minX = Double.MAX_VALUE;
        double maxX = 0;
        for (SweepResult s : r.results()) {
            if (s.messageSize() != size || s.points().isEmpty()) {
                continue;
            }
            List<Double> x = new ArrayList<>();
            List<Double> y = new ArrayList<>();
            for (PointResult p : s.points()) {
                x.add(p.offeredRate());
                y.add(Math.max(0.01, (median ? p.latencyNs().p50() : p.valueAtPercentileNs()) / 1000.0));
                minX = Math.min(minX, p.offeredRate());
                maxX = Math.max(maxX, p.offeredRate());
            }
            XYSeries series = chart.addSeries(s.subject(), x, y);
            series.setMarker(SeriesMarkers.CIRCLE);
            if ("PEER".equals(s.role())) {
                series.setLineStyle(SeriesLines.DASH_DASH);
            }
        }
        List<Double> nkX = new ArrayList<>();
        List<Double> nkY = new ArrayList<>();
        for (SweepResult s : r.results()) {
            if (s.messageSize() == size) {
                for (PointResult p : s.points()) {
                    if (!p.rateKept()) {
                        nkX.add(p.offeredRate());
                        nkY.add(Math.max(0.01, (median ? p.latencyNs().p50() : p.valueAtPercentileNs()) / 1000.0));
                    }
                }
            }
        }
        if (!nkX.isEmpty()) {
            XYSeries nk = chart.addSeries("rate not kept", nkX, nkY);
            nk.setXYSeriesRenderStyle(XYSeries.XYSeriesRenderStyle.Scatter);
            nk.setMarker(SeriesMarkers.CROSS);
            nk.setMarkerColor(Color.BLACK);
        }
        if (maxX == 0) {
            // an empty plot reads as a rendering fault: say why there is nothing
            chart.addSeries("no points", new double[]{1}, new double[]{1}).setMarker(SeriesMarkers.NONE);
            chart.addAnnotation(new AnnotationTextPanel(String.format(
                    "No subject was measured at %d B in this run (see the notes of the report).", size), 300, 320, true));
        }
        if (maxX > 0 && !median) { // the bound applies to the configured percentile, not to the median
            double bound = r.configuration().boundNs / 1000.0;
            XYSeries line = chart.addSeries(String.format("bound %s us", Fmt.pct(bound)),
                    new double[]{minX, maxX}, new double[]{bound, bound});
            line.setMarker(SeriesMarkers.NONE);
            line.setLineColor(Color.RED);
            line.setLineStyle(new BasicStroke(2.5f));
        }
        BitmapEncoder.saveBitmap(chart, stripPng(file), BitmapEncoder.BitmapFormat.PNG);
    }

    static void highestRate(BenchResult r, Integer boundUs, Path file) throws IOException {
        String pct = "p" + Fmt.pct(r.configuration().percentile);
        double bound = boundUs == null ? r.configuration().boundNs / 1000.0 : boundUs;
        Function<SweepResult, Double> rateAtBound = s -> boundUs == null ? s.highestRateAtBound()
                : s.highestRateByBoundUs().get(Integer.toString(boundUs));
        CategoryChart chart = rateBars(r,
                String.format("Highest offered rate with %s <= %s us (0 = never met)", pct, Fmt.pct(bound)), rateAtBound,
                String.format("No subject met %s <= %s us at any offered rate in this run (see the latency-for-throughput chart).",
                        pct, Fmt.pct(bound)));
        if (boundUs == null) {
            List<String> ceiling = new ArrayList<>();
            for (SweepResult s : r.results()) {
                if ("at-max-rate".equals(s.status())) {
                    ceiling.add(s.subject() + " " + s.messageSize() + " B");
                }
            }
            if (!ceiling.isEmpty()) {
                // these bars are lower bounds: the sweep's ceiling stopped them, not the latency bound
                chart.addAnnotation(new AnnotationTextPanel(String.format("≥ (met the bound up to the sweep's ceiling,"
                        + " %s msg/s: a lower bound): %s", Fmt.rate(r.configuration().maxRate), String.join(", ", ceiling)),
                        20, 620, true));
            }
        }
        BitmapEncoder.saveBitmap(chart, stripPng(file), BitmapEncoder.BitmapFormat.PNG);
    }

    static void capacity(BenchResult r, Path file) throws IOException {
        CategoryChart chart = rateBars(r, "Capacity: highest rate received with the schedule kept and the backlog"
                        + " bounded, any latency", SweepResult::capacity,
                "No subject kept any offered rate in this run (see the notes of the report).");
        BitmapEncoder.saveBitmap(chart, stripPng(file), BitmapEncoder.BitmapFormat.PNG);
    }

    /** A bar per subject and one series per message size, in millions of msg/s; a null rate is drawn as 0. */
    private static CategoryChart rateBars(BenchResult r, String title, Function<SweepResult, Double> rate,
                                          String whenEmpty) {
        CategoryChart chart = new CategoryChartBuilder().width(1200).height(650)
                .title(title).xAxisTitle("subject").yAxisTitle("msg/s (millions)").build();
        style(chart.getStyler());
        chart.getStyler().setLegendPosition(Styler.LegendPosition.InsideNE);
        chart.getStyler().setLabelsVisible(true);
        chart.getStyler().setLabelsFont(new Font(Font.SANS_SERIF, Font.PLAIN, 11));
        chart.getStyler().setXAxisLabelRotation(20);
        chart.getStyler().setYAxisDecimalPattern("#,##0.00");
        for (int size : r.configuration().messageSizes) {
            List<String> cats = new ArrayList<>();
            List<Double> vals = new ArrayList<>();
            for (SweepResult s : r.results()) {
                if (s.messageSize() == size) {
                    Double value = rate.apply(s);
                    cats.add(s.subject());
                    vals.add(value == null ? 0.0 : value / 1e6);
                }
            }
            if (!cats.isEmpty()) {
                chart.addSeries(size + " B", cats, vals);
            }
        }
        boolean anyMet = r.results().stream().map(rate).anyMatch(v -> v != null && v > 0);
        if (!anyMet) {
            // an all-zero (or empty) bar chart reads as a rendering fault: say what it means on the chart itself
            chart.getStyler().setYAxisMin(0.0);
            chart.getStyler().setYAxisMax(1.0);
            if (r.results().isEmpty()) {
                chart.addSeries("none", List.of("no subject measured"), List.of(0.0));
            }
            chart.addAnnotation(new AnnotationTextPanel(whenEmpty, 300, 320, true));
        }
        return chart;
    }

    private static void style(org.knowm.xchart.style.AxesChartStyler s) {
        s.setChartBackgroundColor(Color.WHITE);
        s.setPlotBackgroundColor(Color.WHITE);
        s.setLegendBorderColor(Color.LIGHT_GRAY);
        s.setChartTitleFont(new Font(Font.SANS_SERIF, Font.BOLD, 16));
        s.setAxisTitleFont(new Font(Font.SANS_SERIF, Font.PLAIN, 14));
        s.setLegendFont(new Font(Font.SANS_SERIF, Font.PLAIN, 13));
        s.setAxisTickLabelsFont(new Font(Font.SANS_SERIF, Font.PLAIN, 12));
    }

    private static String stripPng(Path file) {
        String s = file.toString();
        return s.endsWith(".png") ? s.substring(0, s.length() - 4) : s;
    }
}
