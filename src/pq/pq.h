#pragma once
// libpq helpers shared by the PostgreSQL task store (store/postgres) and the
// PostgreSQL read-only datasource (source/sql/datasource/postgres): `?` to `$n`
// placeholders, the built-in type oids they bind, and owning handles. Knows
// nothing of tasks or exports.
//
// SQLSTATE → Status stays with each user: a failed store write and a failed
// replica read call for different codes (store/postgres/postgres_error.h).

#include <libpq-fe.h>

#include <memory>
#include <string>
#include <string_view>

namespace export_center::pq {

// Built-in type oids (pg_type.h); fixed since PostgreSQL 7.
inline constexpr Oid kBoolOid = 16;
inline constexpr Oid kInt8Oid = 20;
inline constexpr Oid kTextOid = 25;
inline constexpr Oid kFloat8Oid = 701;

struct ResultDeleter {
  void operator()(PGresult* r) const { PQclear(r); }
};
using ResultPtr = std::unique_ptr<PGresult, ResultDeleter>;

struct ConnDeleter {
  void operator()(PGconn* c) const { PQfinish(c); }
};
using ConnPtr = std::unique_ptr<PGconn, ConnDeleter>;

// Rewrites `?` placeholders to `$1, $2, ...`, leaving quoted text alone.
std::string ToPostgresPlaceholders(std::string_view sql);

}  // namespace export_center::pq
