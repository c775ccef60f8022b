package io.exportcenter.sdk.batch;

/** The access domain of the user who asked for the export. */
public enum AppCode {
  /** The platform's own staff: a tenant-wide view. */
  PLATFORM,
  /** A merchant user: only the data within that user's own scope. */
  MERCHANT
}
