// What both browser tests of the page share (download_center_test.js,
// operator_console_test.js): the configuration page_browser_test.py passes in
// EC_PAGE_TEST (JSON), the API call that asserts a "200" envelope, screenshots,
// and one launch of Debian's chromium with a fresh profile.
"use strict";

const fs = require("fs");
const path = require("path");
const assert = require("assert");
const { chromium } = require("playwright-core");

const cfg = JSON.parse(process.env.EC_PAGE_TEST);
const API = cfg.base + "/api/platform/v1/files";
const STEP_TIMEOUT = 30000;

function logger(tag) {
  return (...args) => console.log(tag, ...args);
}

async function api(method, p, token, body) {
  const res = await fetch(API + p, {
    method,
    headers: { Authorization: "Bearer " + token, ...(body ? { "Content-Type": "application/json" } : {}) },
    body: body ? JSON.stringify(body) : undefined,
  });
  const env = await res.json();
  assert.strictEqual(env.code, "200", `${method} ${p}: ${JSON.stringify(env)}`);
  return env.data;
}

async function shot(page, name) {
  await page.screenshot({ path: path.join(cfg.artifacts, name + ".png"), fullPage: true });
}

// Headless chromium in zh-CN with its own profile folder (--user-data-dir)
// per run; `options` adds to or overrides playwright's context options.
async function launch(options) {
  fs.mkdirSync(cfg.artifacts, { recursive: true });
  return chromium.launchPersistentContext(fs.mkdtempSync(path.join(cfg.tmp, "chromium-")), {
    executablePath: "/usr/bin/chromium",
    headless: true,
    args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
      "--disable-background-networking", "--disable-component-update", "--disable-sync"],
    locale: "zh-CN",
    ...options,
  });
}

module.exports = { cfg, API, STEP_TIMEOUT, logger, api, shot, launch };
