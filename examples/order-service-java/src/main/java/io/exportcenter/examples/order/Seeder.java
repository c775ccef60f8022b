package io.exportcenter.examples.order;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.LocalDate;
import javax.sql.DataSource;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.beans.factory.InitializingBean;
import org.springframework.stereotype.Component;

/**
 * Creates and seeds the service's own database on first start, deterministically: the same
 * tables and the same rows as the C++ sample (examples/customer-service), row for row, so the
 * two SDKs can be compared on the same data (tests/integration/order_service_java_test.py).
 * Runs while the context starts, before the web server accepts calls.
 */
@Component
public class Seeder implements InitializingBean {
  private static final Logger LOG = LoggerFactory.getLogger(Seeder.class);

  static final String SCHEMA =
      """
      CREATE TABLE IF NOT EXISTS customer (
        id INTEGER PRIMARY KEY,
        tenant_id TEXT NOT NULL,
        customer_code TEXT NOT NULL,
        name TEXT NOT NULL,
        status TEXT NOT NULL,
        balance_cents INTEGER NOT NULL,
        credit_limit INTEGER NOT NULL,
        vip INTEGER NOT NULL,
        registered_on TEXT NOT NULL,
        last_order_at INTEGER,
        remarks TEXT
      );
      CREATE INDEX IF NOT EXISTS customer_tenant_id ON customer(tenant_id, id);
      CREATE TABLE IF NOT EXISTS orders (id INTEGER PRIMARY KEY, tenant_id TEXT NOT NULL,
        order_no TEXT NOT NULL, customer_id INTEGER NOT NULL, customer_code TEXT NOT NULL,
        status TEXT NOT NULL, channel TEXT NOT NULL, amount_cents INTEGER NOT NULL,
        quantity INTEGER NOT NULL, paid INTEGER NOT NULL, order_date TEXT NOT NULL,
        created_at INTEGER NOT NULL);
      CREATE INDEX IF NOT EXISTS orders_tenant_date ON orders(tenant_id, order_date DESC, id);
      CREATE INDEX IF NOT EXISTS customer_code ON customer(customer_code)
      """;

  private static final long FIRST_ID = 10000000001L; // past 32 bits: ids travel as strings
  private static final long MS_PER_DAY = 86400000L;
  private static final String[] CITIES = {
    "北京", "上海", "广州", "深圳", "杭州", "成都", "武汉", "南京", "苏州", "西安", "重庆", "天津"
  };
  private static final String[] WORDS = {
    "华", "盛", "鑫", "泰", "恒", "瑞", "安", "达", "信", "联", "通", "创", "远", "嘉", "宏"
  };
  private static final String[] TRADES = {"物流", "贸易", "科技", "实业", "商贸", "供应链", "电子", "食品"};
  // Cells a spreadsheet would run as formulas, plus emoji and control bytes.
  private static final String[] HOSTILE_REMARKS = {
    "=HYPERLINK(\"http://example.invalid\",\"点我\")",
    "+86 138 0000 0000",
    "-5% 折扣客户",
    "@SUM(A1:A9)",
    "VIP 客户 😀🚚",
    "\t制表符开头",
    "包含,逗号\"引号\"\n和换行",
    "=1+1",
  };
  private static final String[] STATUSES = {"NEW", "PAID", "SHIPPED", "DONE", "REFUNDED"};
  private static final String[] CHANNELS = {"WEB", "APP", "STORE"};

  private final DataSource dataSource;
  private final ServiceSettings settings;

  public Seeder(DataSource dataSource, ServiceSettings settings) {
    this.dataSource = dataSource;
    this.settings = settings;
  }

  @Override
  public void afterPropertiesSet() throws SQLException {
    try (Connection c = dataSource.getConnection()) {
      try (Statement st = c.createStatement()) {
        st.execute("PRAGMA journal_mode=WAL");
        for (String ddl : SCHEMA.split(";")) st.execute(ddl);
      }
      c.setAutoCommit(false);
      long customers = seedCustomers(c, settings.seedCustomers());
      long orders = seedOrders(c, settings.seedOrders(), settings.seedCustomers());
      c.commit();
      c.setAutoCommit(true);
      if (customers > 0) LOG.info("seeded {} customers", customers);
      if (orders > 0) LOG.info("seeded {} orders", orders);
    }
  }

  private static boolean empty(Connection c, String table) throws SQLException {
    try (Statement st = c.createStatement();
        ResultSet rs = st.executeQuery("SELECT COUNT(*) FROM " + table)) {
      return rs.next() && rs.getLong(1) == 0;
    }
  }

  /** splitmix64, exactly as the C++ sample: every machine and language seeds the same rows. */
  static final class Prng {
    private long state;

    Prng(long seed) {
      state = seed;
    }

    long next() {
      long z = (state += 0x9E3779B97F4A7C15L);
      z = (z ^ (z >>> 30)) * 0xBF58476D1CE4E5B9L;
      z = (z ^ (z >>> 27)) * 0x94D049BB133111EBL;
      return z ^ (z >>> 31);
    }

    long below(long n) {
      return Long.remainderUnsigned(next(), n);
    }
  }

  private static long seedCustomers(Connection c, long count) throws SQLException {
    if (count <= 0 || !empty(c, "customer")) return 0;
    Prng rng = new Prng(20260803L);
    try (PreparedStatement ins =
        c.prepareStatement(
            "INSERT INTO customer (id, tenant_id, customer_code, name, status, balance_cents,"
                + " credit_limit, vip, registered_on, last_order_at, remarks)"
                + " VALUES (?,?,?,?,?,?,?,?,?,?,?)")) {
      for (long i = 0; i < count; i++) {
        // The draws happen in the order the C++ sample's compiler evaluates them (right to left
        // within one expression); the rows must come out identical.
        String middle;
        if (i % 37 == 0) {
          middle = "柏悦";
        } else {
          String second = WORDS[(int) rng.below(WORDS.length)];
          String first = WORDS[(int) rng.below(WORDS.length)];
          middle = first + second;
        }
        String trade = TRADES[(int) rng.below(TRADES.length)];
        String city = CITIES[(int) rng.below(CITIES.length)];
        long s = rng.below(10);
        String status = s < 7 ? "ACTIVE" : s < 9 ? "INACTIVE" : "FROZEN";
        long balance = rng.below(100000000) - 5000000;
        if (i % 1000 == 6) balance = 6814110; // 68141.10, the classic float trap
        long credit = rng.below(5000) * 1000;
        if (i == 7) credit = 9007199254740993L; // 2^53 + 1: survives only as a string
        boolean vip = rng.below(100) < 15;
        long from = 16436; // 2015-01-01
        long to = 20634; // 2026-06-30
        String registered = LocalDate.ofEpochDay(from + rng.below(to - from + 1)).toString();
        Long lastOrder = null;
        if (rng.below(10) != 0) lastOrder = 1704067200000L + rng.below(940L * MS_PER_DAY);
        String remarks = null;
        if (i % 211 == 5) {
          remarks = HOSTILE_REMARKS[(int) ((i / 211) % HOSTILE_REMARKS.length)];
        } else if (rng.below(4) == 0) {
          remarks = "重点客户，月结30天";
        }
        ins.setLong(1, FIRST_ID + i);
        ins.setString(2, i % 5 < 3 ? "1" : "2");
        ins.setString(3, String.format("CUS%08d", i + 1));
        ins.setString(4, city + middle + trade + "有限公司");
        ins.setString(5, status);
        ins.setLong(6, balance);
        ins.setLong(7, credit);
        ins.setInt(8, vip ? 1 : 0);
        ins.setString(9, registered);
        if (lastOrder == null) {
          ins.setNull(10, java.sql.Types.INTEGER);
        } else {
          ins.setLong(10, lastOrder);
        }
        ins.setString(11, remarks);
        ins.addBatch();
        if (i % 5000 == 4999) ins.executeBatch();
      }
      ins.executeBatch();
    }
    return count;
  }

  private static long seedOrders(Connection c, long orders, long customers) throws SQLException {
    if (orders <= 0 || customers <= 0 || !empty(c, "orders")) return 0;
    final long baseMs = 1704038400000L; // 2024-01-01T00:00:00+08:00
    int[] days = {31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    try (PreparedStatement ins =
        c.prepareStatement("INSERT INTO orders VALUES (?,?,?,?,?,?,?,?,?,?,?,?)")) {
      for (long j = 1; j <= orders; j++) {
        long customer = (j * 7919) % customers + 1;
        long created = baseMs + (j * 104729) % (366L * MS_PER_DAY);
        int mday = (int) ((created - baseMs) / MS_PER_DAY) + 1; // day of 2024 in UTC+8
        int month = 1;
        while (month <= 12 && mday > days[month - 1]) mday -= days[month++ - 1];
        ins.setLong(1, j);
        ins.setString(2, (customer - 1) % 5 < 3 ? "1" : "2");
        ins.setString(3, String.format("SO%010d", j));
        ins.setLong(4, customer);
        ins.setString(5, String.format("CUS%08d", customer));
        ins.setString(6, STATUSES[(int) ((j / 3) % 5)]); // not in step with the tenant
        ins.setString(7, CHANNELS[(int) (j % 3)]);
        ins.setLong(8, (j * 7717) % 10000000 + 100);
        ins.setLong(9, j % 20 + 1);
        ins.setInt(10, j % 5 != 0 ? 1 : 0);
        ins.setString(11, String.format("2024-%02d-%02d", month, mday));
        ins.setLong(12, created);
        ins.addBatch();
        if (j % 5000 == 0) ins.executeBatch();
      }
      ins.executeBatch();
    }
    return orders;
  }
}
