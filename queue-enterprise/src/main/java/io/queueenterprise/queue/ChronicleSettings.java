package io.queueenterprise.queue;

/**
 * Chronicle settings the product insists on, applied before the first Chronicle class is used.
 *
 * <p>The product makes no outbound network calls: Chronicle's usage analytics are disabled here
 * (and in {@code bin/jvm.args}), and the analytics client is excluded from the build.
 */
final class ChronicleSettings {
    static final String ANALYTICS_DISABLE = "chronicle.analytics.disable";
    static final String ANNOUNCER_DISABLE = "chronicle.announcer.disable";

    private ChronicleSettings() {
    }

    static void apply() {
        System.setProperty(ANALYTICS_DISABLE, "true");
        // Chronicle prints a banner on first use; a library embedded in an application should not.
        if (System.getProperty(ANNOUNCER_DISABLE) == null) {
            System.setProperty(ANNOUNCER_DISABLE, "true");
        }
    }
}
