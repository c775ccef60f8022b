package io.exportcenter.sdk.batch;

import io.exportcenter.sdk.ContractException;
import io.exportcenter.sdk.Secrets;
import java.nio.charset.StandardCharsets;
import java.security.InvalidKeyException;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.function.LongSupplier;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

/**
 * The "signed max id" snapshot token (docs/provider-contract.md#snapshot-guarantee).
 *
 * <p>On the first batch the provider reads the current max id, signs it and hands the token out;
 * later batches carry it back and the provider reads only ids up to it, so rows created during
 * the export never appear (updates and deletes are not frozen). The HMAC-SHA256 is bound to the
 * export type, tenant, app code and task, so a token cannot be forged, edited or replayed for
 * another tenant; the format ({@code v1.<maxId>.<hex>}) and the signed message equal the C++
 * SDK's, so both accept each other's tokens under the same secret. Thread-safe.
 */
public final class SnapshotSigner {
  private final SecretKeySpec key;

  /**
   * @param secret at least {@link Secrets#MIN_HMAC_SECRET_BYTES} bytes, no unresolved {@code
   *     ${...}} placeholder; an empty, short or placeholder secret would make tokens forgeable
   * @throws IllegalArgumentException naming the problem
   */
  public SnapshotSigner(String secret) {
    Secrets.require("the snapshot secret", secret, Secrets.MIN_HMAC_SECRET_BYTES);
    this.key = new SecretKeySpec(secret.getBytes(StandardCharsets.UTF_8), "HmacSHA256");
  }

  /** {@code v1.<maxId>.<hex hmac>}. */
  public String sign(BatchRequest request, long maxId) {
    return "v1." + maxId + "." + mac(request, maxId);
  }

  /** The signed max id, or null when the token is garbled, forged or of another task. */
  public Long verify(BatchRequest request, String token) {
    if (token == null || !token.startsWith("v1.")) return null;
    String rest = token.substring(3);
    int dot = rest.indexOf('.');
    if (dot <= 0 || dot > 19) return null;
    Long maxId = IdCursor.parse(rest.substring(0, dot));
    // Re-encode so "v1.007.<mac>" cannot pass as "v1.7.<mac>".
    if (maxId == null || !Long.toString(maxId).equals(rest.substring(0, dot))) return null;
    byte[] expected = mac(request, maxId).getBytes(StandardCharsets.US_ASCII);
    byte[] given = rest.substring(dot + 1).getBytes(StandardCharsets.UTF_8);
    return MessageDigest.isEqual(expected, given) ? maxId : null;
  }

  /**
   * The snapshot of this batch: on the first batch reads {@code currentMaxId} and returns it with
   * a new token to hand out; on later batches verifies the token the center echoed.
   *
   * @throws ContractException 400 when a later batch's token does not verify
   */
  public Snapshot resolve(BatchRequest request, LongSupplier currentMaxId) {
    if (request.snapshotToken() == null) {
      long maxId = currentMaxId.getAsLong();
      return new Snapshot(maxId, sign(request, maxId));
    }
    Long maxId = verify(request, request.snapshotToken());
    if (maxId == null) throw ContractException.invalidSnapshotToken();
    return new Snapshot(maxId, null);
  }

  /**
   * The rows an attempt may see: ids up to {@code maxId}. {@code newToken} is set on the first
   * batch only (put it in the response).
   */
  public record Snapshot(long maxId, String newToken) {}

  private String mac(BatchRequest request, long maxId) {
    // Fields joined by a byte that none of them may contain (the request parser refuses control
    // characters in identities).
    String message =
        "v1\n" + request.exportType() + "\n" + request.tenantId() + "\n" + request.appCode().name()
            + "\n" + request.taskId() + "\n" + maxId;
    try {
      Mac hmac = Mac.getInstance("HmacSHA256");
      hmac.init(key);
      return HexFormat.of().formatHex(hmac.doFinal(message.getBytes(StandardCharsets.UTF_8)));
    } catch (NoSuchAlgorithmException | InvalidKeyException e) {
      throw new IllegalStateException("HmacSHA256 is unavailable", e);
    }
  }
}
