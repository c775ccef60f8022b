package io.exportcenter.sdk.batch;

import io.exportcenter.sdk.Column;
import io.exportcenter.sdk.ContractException;
import java.util.List;

/**
 * One export type of the provider contract, written by the business team (in Spring: a bean;
 * the starter routes {@code POST /internal/exports/v1/{TYPE}/batches} to it).
 *
 * <p>Duties the SDK cannot check: filter by {@link BatchRequest#tenantId()} and {@link
 * BatchRequest#appCode()} (never by tenant fields in parameters; {@link TenantScope} helps),
 * narrow a MERCHANT request to {@link BatchRequest#requestedBy()}'s data scope, stay read-only.
 * Called from several request threads at once.
 */
public interface BatchProvider {
  /** The export type, e.g. {@code CUSTOMER_LIST}. */
  String exportType();

  /** The columns, in order; their hash guards against a change in the middle of an export. */
  List<Column> columns();

  /**
   * Reads at most {@code request.limit()} rows after {@code request.cursor()}.
   *
   * @throws ContractException to answer with its code (400 bad parameters or token, 403, 404,
   *     503); any other exception answers 500, which the center retries
   */
  BatchResponse fetch(BatchRequest request);
}
