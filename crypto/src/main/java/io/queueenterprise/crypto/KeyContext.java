package io.queueenterprise.crypto;

/** Per-key working state of one sealer/opener: the derived keys and the keyed AES block function. */
final class KeyContext {
    final MasterKey master;
    final QueueKey queueKey;
    final int keyId;
    final AesBlockFunction aes;

    KeyContext(MasterKey master, QueueIdentity queue, CipherMode mode, CryptoEngine engine) {
        this.master = master;
        this.queueKey = QueueKey.derive(master, queue, mode);
        this.keyId = master.id();
        this.aes = engine.newBlockFunction(queueKey.aesKey());
    }
}
