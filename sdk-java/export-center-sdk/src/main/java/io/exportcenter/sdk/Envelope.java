package io.exportcenter.sdk;

import io.exportcenter.sdk.json.Json;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The house envelope both contracts answer with: {@code {"code":"200","message":"success",
 * "data":…}} on success, {@code {"code":"<code>","message":…,"data":null}} on failure.
 */
public final class Envelope {
  private Envelope() {}

  /** Success with {@code data}. */
  public static byte[] success(Object data) {
    Map<String, Object> env = new LinkedHashMap<>();
    env.put("code", "200");
    env.put("message", "success");
    env.put("data", data);
    return Json.bytes(env);
  }

  /** Failure with {@code code} and a message. */
  public static byte[] error(int code, String message) {
    Map<String, Object> env = new LinkedHashMap<>();
    env.put("code", Integer.toString(code));
    env.put("message", message);
    env.put("data", null);
    return Json.bytes(env);
  }
}
