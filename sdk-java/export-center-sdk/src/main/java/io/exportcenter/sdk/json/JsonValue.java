package io.exportcenter.sdk.json;

/** A type that knows its own JSON form (plain Java values, see {@link Json#write}). */
public interface JsonValue {
  /** The value to write in place of this object. */
  Object toJson();
}
