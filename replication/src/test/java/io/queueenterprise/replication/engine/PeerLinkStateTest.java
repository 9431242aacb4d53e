package io.queueenterprise.replication.engine;

import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** What each handshake state of a peer's session means to the rest of the engine. */
@Tag("unit")
class PeerLinkStateTest {
    @Test
    void sessionFramesFlowOnlyInTheEstablishedStatesAndAProofIsAwaitedOnlyAfterAnsweringAChallenge() {
        PeerLink p = new PeerLink(1, "b", null, 1);
        assertEquals(PeerLink.State.DISCONNECTED, p.state());
        for (PeerLink.State s : PeerLink.State.values()) {
            p.moveTo(s, "test");
            boolean established = s == PeerLink.State.ESTABLISHED || s == PeerLink.State.ESTABLISHED_RESPONDING;
            boolean awaitingProof = s == PeerLink.State.RESPONDING || s == PeerLink.State.ESTABLISHED_RESPONDING;
            assertEquals(established, p.established(), s.name());
            assertEquals(awaitingProof, p.awaitingProof(), s.name());
        }
        p.progress[0].durableIndex = 5;
        p.dropSession();
        assertEquals(PeerLink.State.DISCONNECTED, p.state());
        assertFalse(p.established());
        assertFalse(p.awaitingProof());
        assertEquals(0, p.sessionId);
        p.challengeAtOnce(1_000_000_000L);
        assertTrue(1_000_000_000L - p.challengeSentNanos >= PeerSessions.CHALLENGE_RETRY_NANOS);
    }
}
