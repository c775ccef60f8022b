// A copy of the reference row generator the performance targets were set
// with (the same algorithm exists in Java and Python outside this repository,
// where a verifier cross-checks every written row). Keeping this copy identical
// keeps the bench's files checkable by it.
// Deterministic "customer list" row generator (C++ reference).
//
// Row i (0-based data row):  5 splitmix64 draws d0..d4 from state i*0xD1B54A32D192ED03
//   id          = 10_000_000_000 + i + 1                          (int64)
//   code        = "CUS%06d" % (i+1)
//   name        = city(2) + core chars + ("有限公司" if L>=8 else "公司"), L = 6 + (d0&0xFFFF)%7 CJK chars
//                 city = ((d0>>16)&0xFFFF)%16, core char k = (d1>>(6k))&63
//   contact     = surname((d0>>32)&0xFFFF)%32 + 1..2 given chars (len 1+((d0>>48)&0xFFFF)%2, char k=(d1>>(36+5k))&31)
//   phone       = "138" + %08d of (d2&0xFFFFFFFF)%100000000
//   email       = syl[(d1>>46)&31] "." syl[(d1>>51)&31] ((i+1)%1000) "@" dom[(d1>>56)&7]
//   status      = s=(d1>>59)&15: s<12 ACTIVE, s<14 FROZEN, else CLOSED
//   credit      = ((d2>>32)%100000000) cents            (0 .. 999,999.99)
//   balance     = ((d3&0xFFFFFFFF)%20000000 - 5000000) cents (-50,000.00 .. 149,999.99)
//   active      = status == ACTIVE
//   created_at  = 1420070400 + (d3>>32)%315360000  unix seconds UTC (2015-01-01 .. ~2024-12-29)
//   birthday    = -3653 + (d4&0xFFFFFFFF)%14610      days since 1970-01-01 (1960-01-01 .. 1999-12-31)
#pragma once
#include <cstdint>
#include <cstring>

namespace gen {

static const char* const HEADERS[12] = {"客户ID",   "客户编码", "客户名称", "联系人",
                                        "联系电话", "电子邮箱", "状态",     "信用额度",
                                        "账户余额", "是否启用", "创建时间", "出生日期"};
// All CJK chars below are 3 bytes in UTF-8.
static const char CITIES[] =
    "北京上海广州深圳杭州南京成都武汉西安苏州天津重庆长沙青岛厦门宁波";  // 16 x 2 chars
static const char CORE[] =
    "华鑫达通信源恒泰丰盛瑞祥宏远兴隆海天安和利德新创科技汇金永昌博康嘉诚凯宇腾飞辉明光正佳合众力成"
    "义荣富强立业联邦云智数星辰晨阳峰亿";  // 64
static const char SURNAMES[] =
    "王李张刘陈杨黄赵吴周徐孙马朱胡郭何高林罗郑梁谢宋唐许韩冯邓曹彭曾";  // 32
static const char GIVEN[] =
    "伟芳娜敏静丽强磊军洋勇艳杰娟涛明超秀霞平刚桂英华玉萍红娥玲芬燕春";  // 32
static const char* const SYL[32] = {"an",   "bai",  "chen", "deng", "fang", "gao", "hu",    "jin",
                                    "kang", "li",   "liu",  "ma",   "ning", "ou",  "peng",  "qian",
                                    "ren",  "song", "tang", "wang", "wei",  "xu",  "yang",  "zhang",
                                    "zhao", "zhou", "lin",  "he",   "guo",  "luo", "liang", "xie"};
static const char* const DOMAINS[8] = {"163.com",          "qq.com",      "126.com",
                                       "sina.com",         "foxmail.com", "example.cn",
                                       "corp.example.com", "outlook.com"};
static const char* const STATUS[3] = {"ACTIVE", "FROZEN", "CLOSED"};

struct Row {
  int64_t id;
  char code[16];
  uint8_t code_len;
  char name[12 * 3];
  uint8_t name_len;
  char contact[3 * 3];
  uint8_t contact_len;
  char phone[11];  // always 11 bytes
  char email[48];
  uint8_t email_len;
  uint8_t status;  // 0 ACTIVE, 1 FROZEN, 2 CLOSED
  bool active;
  int64_t credit_cents;
  int64_t balance_cents;
  int64_t created_at;  // unix seconds, UTC
  int32_t birthday;    // days since 1970-01-01
};

static inline uint64_t next(uint64_t& s) {
  s += 0x9E3779B97F4A7C15ULL;
  uint64_t z = s;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

// writes decimal digits of v, zero-padded to at least `width`; returns length
static inline int put_uint(char* p, uint64_t v, int width) {
  char tmp[24];
  int n = 0;
  do {
    tmp[n++] = char('0' + v % 10);
    v /= 10;
  } while (v);
  while (n < width) tmp[n++] = '0';
  for (int k = 0; k < n; k++) p[k] = tmp[n - 1 - k];
  return n;
}

static inline void make_row(uint64_t i, Row& r) {
  uint64_t s = i * 0xD1B54A32D192ED03ULL;
  const uint64_t d0 = next(s), d1 = next(s), d2 = next(s), d3 = next(s), d4 = next(s);
  r.id = 10000000000LL + int64_t(i) + 1;

  memcpy(r.code, "CUS", 3);
  r.code_len = uint8_t(3 + put_uint(r.code + 3, i + 1, 6));

  const int L = 6 + int((d0 & 0xFFFF) % 7);
  const int city = int(((d0 >> 16) & 0xFFFF) % 16);
  const int suf = L >= 8 ? 4 : 2;
  const int core = L - 2 - suf;
  char* p = r.name;
  memcpy(p, CITIES + city * 6, 6);
  p += 6;
  for (int k = 0; k < core; k++) {
    memcpy(p, CORE + ((d1 >> (6 * k)) & 63) * 3, 3);
    p += 3;
  }
  if (suf == 4) {
    memcpy(p, "有限公司", 12);
    p += 12;
  } else {
    memcpy(p, "公司", 6);
    p += 6;
  }
  r.name_len = uint8_t(p - r.name);

  p = r.contact;
  memcpy(p, SURNAMES + ((d0 >> 32) & 0xFFFF) % 32 * 3, 3);
  p += 3;
  const int glen = 1 + int(((d0 >> 48) & 0xFFFF) % 2);
  for (int k = 0; k < glen; k++) {
    memcpy(p, GIVEN + ((d1 >> (36 + 5 * k)) & 31) * 3, 3);
    p += 3;
  }
  r.contact_len = uint8_t(p - r.contact);

  memcpy(r.phone, "138", 3);
  put_uint(r.phone + 3, (d2 & 0xFFFFFFFFULL) % 100000000ULL, 8);

  p = r.email;
  const char* a = SYL[(d1 >> 46) & 31];
  const char* b = SYL[(d1 >> 51) & 31];
  const char* dom = DOMAINS[(d1 >> 56) & 7];
  size_t n = strlen(a);
  memcpy(p, a, n);
  p += n;
  *p++ = '.';
  n = strlen(b);
  memcpy(p, b, n);
  p += n;
  p += put_uint(p, (i + 1) % 1000, 1);
  *p++ = '@';
  n = strlen(dom);
  memcpy(p, dom, n);
  p += n;
  r.email_len = uint8_t(p - r.email);

  const unsigned st = unsigned((d1 >> 59) & 15);
  r.status = st < 12 ? 0 : (st < 14 ? 1 : 2);
  r.active = r.status == 0;
  r.credit_cents = int64_t((d2 >> 32) % 100000000ULL);
  r.balance_cents = int64_t((d3 & 0xFFFFFFFFULL) % 20000000ULL) - 5000000;
  r.created_at = 1420070400LL + int64_t((d3 >> 32) % 315360000ULL);
  r.birthday = int32_t(-3653 + int64_t((d4 & 0xFFFFFFFFULL) % 14610ULL));
}

}  // namespace gen
