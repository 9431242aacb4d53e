package io.queueenterprise.kubernetes.testbed;

import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Runs the test class against the real single-node cluster: started once per test run (or reused
 * when one is already up), torn down when the run ends. Skipped, with one line saying why, where
 * the machine lacks root or the Go toolchain. Test methods may take {@link Testbed} or
 * {@link io.fabric8.kubernetes.client.KubernetesClient} parameters.
 */
@Target(ElementType.TYPE)
@Retention(RetentionPolicy.RUNTIME)
@ExtendWith(KubernetesTestbedExtension.class)
public @interface KubernetesTestbed {
}
