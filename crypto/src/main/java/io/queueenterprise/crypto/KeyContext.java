package io.queueenterprise.crypto;

/** Per-key working state of one sealer/opener: the derived keys, the keyed AES block function and MAC. */
final class KeyContext {
    final MasterKey master;
    final QueueKey queueKey;
    final int keyId;
    final AesBlockFunction aes;
    final Poly1305Aes mac; // null in CTR mode

    KeyContext(MasterKey master, QueueIdentity queue, CipherMode mode, CryptoEngine engine) {
        this.master = master;
        this.queueKey = QueueKey.derive(master, queue);
        this.keyId = master.id();
        this.aes = engine.newBlockFunction(queueKey.aesKey());
        this.mac = mode.authenticated() ? new Poly1305Aes(queueKey.poly1305R()) : null;
    }
}
