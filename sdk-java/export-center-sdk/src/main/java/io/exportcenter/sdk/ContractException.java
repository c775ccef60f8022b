package io.exportcenter.sdk;

/**
 * A refusal with its answer code, thrown by a business implementation: the SDK answers HTTP
 * {@code code} with the envelope {@code {"code": "<code>", "message": …, "data": null}}. The
 * message reaches the center's failure message (cut at 200 bytes): write what a person can act
 * on, never row data or secrets.
 */
public class ContractException extends RuntimeException {
  private final int code;

  public ContractException(int code, String message) {
    super(message);
    if (code < 100 || code > 999) throw new IllegalArgumentException("code must be 3 digits");
    this.code = code;
  }

  public ContractException(ErrorClass errorClass, String message) {
    this(errorClass.code(), message);
  }

  /** The envelope code and HTTP status. */
  public int code() {
    return code;
  }

  public static ContractException badRequest(String message) {
    return new ContractException(ErrorClass.BAD_REQUEST, message);
  }

  public static ContractException forbidden(String message) {
    return new ContractException(ErrorClass.FORBIDDEN, message);
  }

  public static ContractException notFound(String message) {
    return new ContractException(ErrorClass.NOT_FOUND, message);
  }

  public static ContractException unavailable(String message) {
    return new ContractException(ErrorClass.UNAVAILABLE, message);
  }

  /** The snapshot token failed verification: permanent, the same token can never pass. */
  public static ContractException invalidSnapshotToken() {
    return badRequest("snapshotToken is invalid or belongs to another task");
  }
}
