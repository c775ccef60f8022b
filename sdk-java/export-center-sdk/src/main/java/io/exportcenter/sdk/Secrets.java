package io.exportcenter.sdk;

import java.nio.charset.StandardCharsets;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The rule for the secrets a business service configures, the same as the C++ SDK's
 * (sdk/secret_check.h) and the center's own: a secret is refused when it is empty, shorter than
 * its minimum, or still an unresolved placeholder such as {@code ${EXPORT_CENTER_INTERNAL_TOKEN}}
 * (Spring leaves a placeholder whose variable is unset as literal text in a
 * {@code @ConfigurationProperties} value; without this check that text became the token, and a
 * caller sending it was answered). Messages never quote a secret, only a placeholder.
 */
public final class Secrets {
  /** The internal token, a bearer token compared whole: 16 bytes of a random token. */
  public static final int MIN_TOKEN_BYTES = 16;
  /** The snapshot secret, an HMAC-SHA256 key: as long as the hash (RFC 2104 §3). */
  public static final int MIN_HMAC_SECRET_BYTES = 32;

  private static final Pattern PLACEHOLDER = Pattern.compile("\\$\\{[^}]*}");

  private Secrets() {}

  /** Why {@code value} cannot serve as a secret, or null when it can. */
  public static String problem(String value, int minBytes) {
    if (value == null || value.isEmpty()) return "is empty";
    Matcher m = PLACEHOLDER.matcher(value);
    if (m.find()) {
      return m.start() == 0 && m.end() == value.length()
          ? "is the unresolved placeholder " + value
          : "contains an unresolved ${...} placeholder";
    }
    int bytes = value.getBytes(StandardCharsets.UTF_8).length;
    if (bytes < minBytes) {
      return "is too short (" + bytes + " bytes; at least " + minBytes + ")";
    }
    return null;
  }

  /**
   * Returns {@code value} when it can serve as a secret.
   *
   * @param name the setting, named in the message ({@code export-center.sdk.internal-token})
   * @throws IllegalArgumentException "NAME PROBLEM" otherwise
   */
  public static String require(String name, String value, int minBytes) {
    String problem = problem(value, minBytes);
    if (problem != null) throw new IllegalArgumentException(name + " " + problem);
    return value;
  }
}
