package io.queueenterprise.bench.harness;

import me.tongfei.progressbar.ConsoleProgressBarConsumer;
import me.tongfei.progressbar.ProgressBar;
import me.tongfei.progressbar.ProgressBarBuilder;
import me.tongfei.progressbar.ProgressBarStyle;

import java.io.PrintStream;

/**
 * Progress on stderr: a live progress bar on a terminal (total = planned measurement runs), plain
 * lines otherwise (pipes, CI, tests). Updated between runs only, never from the hot loop.
 */
public interface Progress extends AutoCloseable {

    void step(String label);

    void message(String line);

    @Override
    void close();

    static Progress create(boolean wanted, long plannedRuns, PrintStream err) {
        if (wanted && System.console() != null) {
            return new Bar(plannedRuns, err);
        }
        return new Lines(wanted, err);
    }

    /** me.tongfei progress bar. */
    final class Bar implements Progress {
        private final ProgressBar bar;
        private final PrintStream err;

        Bar(long total, PrintStream err) {
            this.err = err;
            bar = new ProgressBarBuilder().setTaskName("qe bench").setInitialMax(total)
                    .setStyle(ProgressBarStyle.ASCII).setUpdateIntervalMillis(1000)
                    .setConsumer(new ConsoleProgressBarConsumer(err)).showSpeed().build();
        }

        @Override public void step(String label) {
            if (bar.getCurrent() + 1 > bar.getMax()) {
                bar.maxHint(bar.getCurrent() + 1);
            }
            bar.setExtraMessage(label);
            bar.step();
        }

        @Override public void message(String line) {
            bar.setExtraMessage(line);
        }

        @Override public void close() {
            bar.maxHint(bar.getCurrent());
            bar.close();
        }
    }

    /** One line per point, for non-terminals. */
    final class Lines implements Progress {
        private final boolean verbose;
        private final PrintStream err;
        private long n;

        Lines(boolean verbose, PrintStream err) {
            this.verbose = verbose;
            this.err = err;
        }

        @Override public void step(String label) {
            n++;
        }

        @Override public void message(String line) {
            if (verbose) {
                err.println("[qe bench] " + line);
            }
        }

        @Override public void close() {
            if (verbose) {
                err.println("[qe bench] " + n + " measurement runs done");
            }
        }
    }
}
