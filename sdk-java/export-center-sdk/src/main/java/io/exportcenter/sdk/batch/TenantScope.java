package io.exportcenter.sdk.batch;

import io.exportcenter.sdk.ContractException;
import java.util.Map;
import java.util.Set;

/**
 * The tenant and access domain a request may read, taken only from what the center sets from the
 * task — never from user parameters (docs/provider-contract.md#request). Use its values in every
 * WHERE clause.
 *
 * @param tenantId the tenant
 * @param appCode PLATFORM (tenant-wide) or MERCHANT (the user's own scope)
 * @param requestedBy the user
 */
public record TenantScope(String tenantId, AppCode appCode, String requestedBy) {
  /** Context keys the center sets; a user parameter of these names is never trusted. */
  public static final Set<String> CONTEXT_KEYS = Set.of("tenantId", "appCode", "requestedBy");

  /** The scope of a batch request. */
  public static TenantScope of(BatchRequest request) {
    return new TenantScope(request.tenantId(), request.appCode(), request.requestedBy());
  }

  /**
   * The scope of a SQL-template call, from the parameters the center sent: it sets {@code
   * tenantId}, {@code appCode} and {@code requestedBy} from the task, overriding user keys of
   * those names (docs/sql-template-route.md#template-parameters).
   *
   * @throws ContractException 400 when the center's context keys are missing
   */
  public static TenantScope of(Map<String, Object> sqlParameters) {
    Object tenant = sqlParameters.get("tenantId");
    Object app = sqlParameters.get("appCode");
    Object user = sqlParameters.get("requestedBy");
    if (!(tenant instanceof String t) || t.isEmpty()) {
      throw ContractException.badRequest("tenantId is required");
    }
    AppCode code;
    try {
      code = AppCode.valueOf(String.valueOf(app));
    } catch (IllegalArgumentException e) {
      throw ContractException.badRequest("appCode must be PLATFORM or MERCHANT");
    }
    return new TenantScope(t, code, user == null ? "" : user.toString());
  }

  /**
   * Refuses a MERCHANT caller: for exports that list a whole tenant's data.
   *
   * @throws ContractException 403 for MERCHANT
   */
  public TenantScope requirePlatform(String exportName) {
    if (appCode != AppCode.PLATFORM) {
      throw ContractException.forbidden(exportName + " is available to PLATFORM only");
    }
    return this;
  }

  /** Whether the caller is a merchant user, whose rows must be narrowed to its own scope. */
  public boolean merchant() {
    return appCode == AppCode.MERCHANT;
  }
}
