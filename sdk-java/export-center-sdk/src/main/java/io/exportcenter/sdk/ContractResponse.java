package io.exportcenter.sdk;

/** An answer of the dispatcher: the HTTP status and the JSON body (UTF-8). */
public record ContractResponse(int status, byte[] body) {
  public static final String CONTENT_TYPE = "application/json; charset=utf-8";
}
