"""What the sample customer service holds, read straight from its SQLite file,
in the shape a correct CUSTOMER_LIST export must have in each cell."""
import datetime
import sqlite3

TITLES = ["客户ID", "客户编码", "公司名称", "状态", "账户余额", "信用额度", "VIP", "注册日期",
          "最近下单时间", "备注"]
KINDS = ["INTEGER", "STRING", "STRING", "STRING", "DECIMAL", "INTEGER", "BOOLEAN", "DATE",
         "DATETIME", "STRING"]
PY_TYPES = {"INTEGER": int, "STRING": str, "DECIMAL": (int, float), "BOOLEAN": bool,
            "DATE": datetime.datetime, "DATETIME": datetime.datetime}
SHANGHAI = datetime.timedelta(hours=8)  # no daylight saving since 1991


def guard(text):
    """The formula-injection guard of docs/xlsx.md (Cells)."""
    if text and text[0] in "=+-@\t\r":
        return "'" + text
    return text


def expected_rows(db_path, tenant, parameters):
    keyword = parameters.get("keyword")
    status = parameters.get("status")
    con = sqlite3.connect(db_path)
    try:
        rows = con.execute(
            "SELECT id, customer_code, name, status, balance_cents, credit_limit, vip,"
            " registered_on, last_order_at, remarks FROM customer"
            " WHERE tenant_id = ? AND (? IS NULL OR instr(name, ?) > 0 OR instr(customer_code, ?) > 0)"
            " AND (? IS NULL OR status = ?) ORDER BY id",
            (tenant, keyword, keyword, keyword, status, status)).fetchall()
    finally:
        con.close()
    out = []
    for (cid, code, name, st, cents, credit, vip, registered, last_order, remarks) in rows:
        y, m, d = (int(p) for p in registered.split("-"))
        last = None
        if last_order is not None:
            last = datetime.datetime(1970, 1, 1) + datetime.timedelta(milliseconds=last_order) \
                + SHANGHAI
        out.append([cid, guard(code), guard(name), st, cents / 100, credit, bool(vip),
                    datetime.datetime(y, m, d), last, guard(remarks) if remarks else None])
    return out


def same_cell(got, want):
    """Equal value and the same kind of cell (a bool is not an int here)."""
    if isinstance(want, bool) or isinstance(got, bool):
        return got is want
    if isinstance(want, datetime.datetime):
        return isinstance(got, datetime.datetime) and abs((got - want).total_seconds()) < 0.002
    if isinstance(want, float):
        return isinstance(got, (int, float)) and got == want
    return type(got) is type(want) and got == want
