package io.exportcenter.sdk;

/**
 * How the center treats each answer code (docs/provider-contract.md#error-classes,
 * docs/sql-template-route.md#error-classes). A business implementation picks the class by the
 * code of the {@link ContractException} it throws; anything else it throws answers 500.
 */
public enum ErrorClass {
  /** 400: bad parameters, an invalid snapshot token. The task FAILS; a retry cannot help. */
  BAD_REQUEST(400, false),
  /** 401: the internal token is wrong. The task FAILS and the center logs a security event. */
  UNAUTHORIZED(401, false),
  /** 403: the caller may not export this (e.g. a MERCHANT asking for a platform export). */
  FORBIDDEN(403, false),
  /** 404: no such export type or scenario. The task FAILS without retry. */
  NOT_FOUND(404, false),
  /** 500: the implementation failed. The center retries with back-off. */
  INTERNAL(500, true),
  /** 503: a dependency (the database) is down. The center retries with back-off. */
  UNAVAILABLE(503, true);

  private final int code;
  private final boolean retried;

  ErrorClass(int code, boolean retried) {
    this.code = code;
    this.retried = retried;
  }

  /** The envelope code and HTTP status. */
  public int code() {
    return code;
  }

  /** Whether the center retries the task after this answer. */
  public boolean retriedByCenter() {
    return retried;
  }

  /** The class of an answer code: 5xx, 408 and 429 are retried, other 4xx are not. */
  public static boolean isRetried(int code) {
    return code >= 500 || code == 408 || code == 429;
  }
}
