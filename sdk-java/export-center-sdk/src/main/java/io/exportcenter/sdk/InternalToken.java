package io.exportcenter.sdk;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;

/**
 * The {@code X-Internal-Service-Token} check. Constant-time whatever the lengths (both sides are
 * hashed first), and fail-closed: an empty configured token rejects every caller.
 */
public final class InternalToken {
  /** The header the center sends the token in. */
  public static final String HEADER = "X-Internal-Service-Token";

  private final byte[] expectedDigest;

  public InternalToken(String expected) {
    this.expectedDigest = expected == null || expected.isEmpty() ? null : sha256(expected);
  }

  /** Whether {@code given} (the header's value, null when absent) is the configured token. */
  public boolean matches(String given) {
    byte[] g = sha256(given == null ? "" : given);
    // Compare even when nothing is configured, so timing tells nothing either way.
    boolean equal = MessageDigest.isEqual(expectedDigest == null ? new byte[32] : expectedDigest, g);
    return expectedDigest != null && equal;
  }

  private static byte[] sha256(String s) {
    try {
      return MessageDigest.getInstance("SHA-256").digest(s.getBytes(StandardCharsets.UTF_8));
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("SHA-256 is missing from this JVM", e);
    }
  }
}
