package io.exportcenter.spring;

import io.exportcenter.sdk.ContractDispatcher;
import io.exportcenter.sdk.ContractResponse;
import io.exportcenter.sdk.InternalToken;
import jakarta.servlet.http.HttpServletRequest;
import java.io.IOException;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import org.springframework.http.MediaType;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RestController;

/**
 * The two contracts' HTTP endpoints in a Spring MVC app. Bytes in, bytes out: the dispatcher
 * writes the JSON itself, so the answers equal the C++ SDK's byte for byte and no message
 * converter or Jackson customisation of the service can change them.
 */
@RestController
public class ContractController {
  private final ContractDispatcher dispatcher;
  private final String basePath;

  /**
   * @param properties its {@code base-path} ("" or {@code /segment...}) prefixes both routes
   *     below the servlet context path
   */
  public ContractController(ContractDispatcher dispatcher, ExportCenterProperties properties) {
    this.dispatcher = dispatcher;
    this.basePath = properties.getBasePath();
  }

  /** Answers both routes; the mapping's prefix is the same property the constructor got. */
  @PostMapping({
    "${export-center.sdk.base-path:}/internal/exports/v1/{exportType}/batches",
    "${export-center.sdk.base-path:}/dispatch/{op}"
  })
  public ResponseEntity<byte[]> handle(HttpServletRequest request) throws IOException {
    String path =
        request.getRequestURI().substring(request.getContextPath().length() + basePath.length());
    // queryId from the query string itself: asking the servlet for a parameter would read a
    // form-encoded body and leave nothing for the dispatcher.
    String queryId = queryParameter(request.getQueryString(), "queryId");
    ContractResponse r =
        dispatcher.handle(
            path, queryId, request.getHeader(InternalToken.HEADER), request.getInputStream());
    return ResponseEntity.status(r.status())
        .contentType(MediaType.parseMediaType(ContractResponse.CONTENT_TYPE))
        .body(r.body());
  }

  static String queryParameter(String query, String name) {
    if (query == null) return null;
    for (String pair : query.split("&")) {
      int eq = pair.indexOf('=');
      String key = URLDecoder.decode(eq < 0 ? pair : pair.substring(0, eq), StandardCharsets.UTF_8);
      if (key.equals(name)) {
        return eq < 0 ? "" : URLDecoder.decode(pair.substring(eq + 1), StandardCharsets.UTF_8);
      }
    }
    return null;
  }
}
