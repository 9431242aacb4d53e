package io.queueenterprise.operator.api;

/** Chronicle Queue roll cycles a node accepts (how often a new cycle file starts). */
public enum RollCycle {
    FIVE_MINUTELY, TEN_MINUTELY, TWENTY_MINUTELY, HALF_HOURLY, FAST_HOURLY, TWO_HOURLY, FOUR_HOURLY, SIX_HOURLY,
    FAST_DAILY, WEEKLY
}
