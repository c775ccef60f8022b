// The download-center page in a real browser (Debian chromium, headless,
// driven by playwright-core) against a real center and the sample customer
// service, started by page_browser_test.py, which passes the addresses,
// tokens and prepared task ids in the EC_PAGE_TEST environment variable (JSON).
//
// Each step prints one line; a failed check throws and exits non-zero after a
// screenshot of the moment. Screenshots land in `artifacts`.
"use strict";

const fs = require("fs");
const path = require("path");
const assert = require("assert");
const crypto = require("crypto");
const { cfg, API, STEP_TIMEOUT, logger, api, shot, launch } = require("./browser_kit");

const log = logger("[page-test]");

async function faults(body) {
  const res = await fetch(cfg.providerBase + "/admin/faults", {
    method: "POST",
    headers: { "Content-Type": "application/json", "X-Internal-Service-Token": cfg.internalToken },
    body: JSON.stringify(body),
  });
  assert.strictEqual(res.status, 200, "faults: " + (await res.text()));
}

function row(page, id) {
  return page.locator(`#rows tr[data-id="${id}"]`);
}

async function waitStatus(page, id, status) {
  await row(page, id).and(page.locator(`[data-status="${status}"]`)).waitFor({ timeout: STEP_TIMEOUT });
}

// A new tab: its own sessionStorage, so its own sign-in.
async function openPage(context, token, viewport) {
  const page = await context.newPage();
  await page.setViewportSize(viewport);
  page.on("pageerror", (e) => log("page error:", e.message));
  page.requestedUrls = [];
  page.on("request", (r) => page.requestedUrls.push(r.url()));
  await page.goto(cfg.base + "/#token=" + token);
  await page.locator("#app").waitFor({ state: "visible" });
  await page.waitForFunction(() => document.body.dataset.live === "sse", null, { timeout: STEP_TIMEOUT });
  return page;
}

async function signInCleansTheAddressBar(page) {
  assert.strictEqual(new URL(page.url()).hash, "", "the token must leave the address bar");
  const kept = await page.evaluate(() => sessionStorage.getItem("exportCenter.token"));
  assert.strictEqual(kept, cfg.aliceToken);
  assert.strictEqual(await page.locator("html").getAttribute("lang"), "zh-CN");
  // The event stream is opened with a single-use ticket; the token never
  // appears in a URL (proxies log URLs).
  const streams = page.requestedUrls.filter((u) => u.includes("/export-tasks/events?"));
  assert(streams.length > 0 && streams.every((u) => u.includes("ticket=")), "events URLs: " + streams);
  const apiUrls = page.requestedUrls.filter((u) => u.includes("/api/"));
  assert(!apiUrls.some((u) => u.includes(cfg.aliceToken) || u.includes("access_token")),
    "an API URL carried the token");
  log("signed in from #token; address bar clean; zh-CN; events opened with a ticket");
}

// Create from the form and watch the progress arrive over SSE to 100 %.
async function createFromTheFormAndWatchProgress(page) {
  // Slow batches (5 of 300 rows, ~1 s each): progress is seen moving.
  await faults({ hangMs: 900, hangCount: 6 });
  await page.selectOption("#create-type", "CUSTOMER_LIST");
  await page.locator("#create-params select").first().selectOption("ACTIVE");
  await page.fill("#create-name", "浏览器导出");
  const listRequests = [];
  page.on("request", (r) => {
    if (r.url().includes("/export-tasks?")) listRequests.push(Date.now());
  });
  await page.click("#create-submit");
  const created = page.locator("#created tr[data-id]");
  await created.waitFor({ timeout: STEP_TIMEOUT });
  const id = await created.getAttribute("data-id");
  log("created task", id, "from the form; shown at once");
  const seen = new Set();
  const deadline = Date.now() + 60000;
  for (;;) {
    const pct = await row(page, id).locator(".pct").textContent({ timeout: 1000 }).catch(() => "");
    if (pct) seen.add(pct.trim());
    if (pct.trim() === "100%") break;
    assert(Date.now() < deadline, "progress did not reach 100 %: " + [...seen]);
    await page.waitForTimeout(50);
  }
  await waitStatus(page, id, "SUCCEEDED");
  const between = [...seen].filter((p) => p !== "0%" && p !== "100%");
  assert(between.length > 0, "no progress between 0 and 100 % was shown: " + [...seen]);
  assert.strictEqual(await page.evaluate(() => document.body.dataset.live), "sse");
  // Updates came over the stream: at most the reloads a create triggers, no polling.
  assert(listRequests.length <= 3, "the list was polled " + listRequests.length + " times");
  log("progress over SSE:", [...seen].join(" → "), "; list requests:", listRequests.length);
  await shot(page, "01-succeeded");
  return id;
}

async function downloadMatchesTheApi(page, id) {
  const [download] = await Promise.all([
    page.waitForEvent("download", { timeout: STEP_TIMEOUT }),
    row(page, id).locator('[data-action="download"]').click(),
  ]);
  const file = path.join(cfg.artifacts, "download-" + id);
  await download.saveAs(file);
  const fromPage = fs.readFileSync(file);
  const res = await fetch(API + "/export-tasks/" + id + "/download", {
    headers: { Authorization: "Bearer " + cfg.aliceToken },
  });
  assert.strictEqual(res.status, 200);
  const fromApi = Buffer.from(await res.arrayBuffer());
  assert(fromPage.length > 0 && fromPage.equals(fromApi), `downloaded ${fromPage.length} bytes, API ${fromApi.length}`);
  // The manifest: the page, the Repr-Digest header and an independent hash agree.
  const digest = crypto.createHash("sha256").update(fromPage);
  const shown = await row(page, id).locator(".sha").getAttribute("data-sha256");
  assert.strictEqual(shown, digest.copy().digest("hex"), "the page's SHA-256 is not the file's");
  assert.strictEqual(res.headers.get("repr-digest"), "sha-256=:" + digest.digest("base64") + ":");
  await row(page, id).locator(".downloads").filter({ hasText: /^[1-9]/ }).waitFor({ timeout: STEP_TIMEOUT });
  log("download:", fromPage.length, "bytes, identical to the API's, SHA-256 as shown; count shown");
}

// The task's detail: its timeline as the API gives it, in the browser's time
// zone (Asia/Shanghai, the machine runs on UTC) and in the page's language; the
// governed columns the task's row names.
async function timelineInTheDetail(page, id) {
  const governed = row(page, id).locator(".governed");
  assert.strictEqual(await governed.getAttribute("data-masked"), "2");
  assert.strictEqual((await governed.textContent()).trim(), "2 列已脱敏");
  const button = row(page, id).locator('[data-action="details"]');
  assert.strictEqual(await button.getAttribute("aria-expanded"), "false");
  await button.click();
  const items = page.locator(`tr.detail[data-detail-for="${id}"] ol.timeline li`);
  await items.first().waitFor({ timeout: STEP_TIMEOUT });
  const fromApi = await api("GET", "/export-tasks/" + id + "/timeline", cfg.aliceToken);
  // The download above is on it, as the page may have read it before or after.
  await page.waitForFunction(([sel, n]) => document.querySelectorAll(sel).length >= n,
    [`tr.detail[data-detail-for="${id}"] ol.timeline li`, fromApi.events.length], { timeout: STEP_TIMEOUT });
  const kinds = await items.evaluateAll((li) => li.map((i) => i.dataset.kind));
  assert.deepStrictEqual(kinds, fromApi.events.map((e) => e.kind), "the page's timeline is not the API's");
  for (const k of ["CREATED", "COMMAND_SENT", "CLAIMED", "FINISHED", "DOWNLOADED"]) assert(kinds.includes(k), k + " missing: " + kinds);
  assert.strictEqual(kinds[0], "CREATED");
  const first = items.first();
  assert.strictEqual(await first.locator("time").getAttribute("datetime"), fromApi.events[0].at);
  const at = new Date(fromApi.events[0].at);
  const shanghai = new Date(at.getTime() + 8 * 3600 * 1000);
  const hms = [shanghai.getUTCHours(), shanghai.getUTCMinutes(), shanghai.getUTCSeconds()]
    .map((n) => String(n).padStart(2, "0")).join(":");
  const shown = await first.locator("time").textContent();
  assert(shown.includes(hms), `the time ${shown} is not ${hms}, Shanghai's time of ${fromApi.events[0].at}`);
  assert.strictEqual(await first.locator(".kind").textContent(), "已提交");
  const finished = items.filter({ has: page.locator(".kind", { hasText: "结束" }) });
  assert((await finished.locator(".facts-text").textContent()).includes("已完成"), "FINISHED names no status");
  assert.strictEqual(await button.getAttribute("aria-expanded"), "true");
  await shot(page, "01b-timeline");
  await page.click("#lang");
  await page.locator(`tr.detail[data-detail-for="${id}"] li[data-kind="CREATED"] .kind`, { hasText: "Created" })
    .waitFor({ timeout: STEP_TIMEOUT });
  assert.strictEqual((await row(page, id).locator(".governed").textContent()).trim(), "2 columns masked");
  await page.click("#lang");
  await row(page, id).locator('[data-action="details"]').click();
  await page.locator("tr.detail").waitFor({ state: "detached", timeout: STEP_TIMEOUT });
  log("timeline:", kinds.length, "events as the API's, local time", shown, "in zh and en; 2 columns masked shown");
}

async function cancelARunningOne(page) {
  // Every customer of the tenant, ~1.5 s per batch of 300: running for many
  // seconds, so the click lands mid-export.
  await faults({ hangMs: 1500, hangCount: 20 });
  const task = await api("POST", "/export-tasks", cfg.aliceToken, {
    exportType: "CUSTOMER_LIST", taskName: "要取消的导出", parameters: {},
  });
  await row(page, task.id).waitFor({ timeout: STEP_TIMEOUT });  // appears live
  await waitStatus(page, task.id, "RUNNING");
  await shot(page, "02-running");
  await row(page, task.id).locator('[data-action="cancel"]').click();
  await waitStatus(page, task.id, "CANCELLED");
  await faults({ hangMs: 0, hangCount: 0 });
  log("cancelled running task", task.id);
}

async function retryAFailedOne(page) {
  await row(page, cfg.failedId).locator(".why").waitFor();
  const why = await row(page, cfg.failedId).locator(".why").textContent();
  assert(why.length > 4, "no failure reason shown");
  await shot(page, "03-failed");
  await row(page, cfg.failedId).locator('[data-action="retry"]').click();
  await waitStatus(page, cfg.failedId, "SUCCEEDED");
  log("retried failed task", cfg.failedId, "(reason shown:", why + ")");
}

// docs/task-lifecycle.md#export-again: a STALE task is exported again (a new task, same
// parameters), never retried into another STALE.
async function exportAStaleOneAgain(page) {
  const stale = row(page, cfg.staleId);
  await waitStatus(page, cfg.staleId, "STALE");
  assert.strictEqual(await stale.locator('[data-action="retry"]').count(), 0, "a STALE task offers retry");
  const button = stale.locator('[data-action="export-again"]');
  assert.strictEqual((await button.textContent()).trim(), "重新导出");
  await shot(page, "03b-stale");
  const before = await api("GET", "/export-tasks/" + cfg.staleId, cfg.aliceToken);
  const [created] = await Promise.all([
    page.waitForResponse((r) => r.url().endsWith("/export-tasks/" + cfg.staleId + "/export-again"),
      { timeout: STEP_TIMEOUT }),
    button.click(),
  ]);
  const fresh = (await created.json()).data;
  assert(fresh && fresh.id && fresh.id !== cfg.staleId, "export again made no new task: " + JSON.stringify(fresh));
  assert.strictEqual(fresh.exportType, before.exportType);
  assert.strictEqual(fresh.format, before.format);
  assert.strictEqual(fresh.taskName, before.taskName);
  await waitStatus(page, fresh.id, "SUCCEEDED");
  const after = await api("GET", "/export-tasks/" + cfg.staleId, cfg.aliceToken);
  assert.strictEqual(after.status, "STALE", "the old task changed");
  log("exported STALE task", cfg.staleId, "again as", fresh.id);
  return fresh.id;
}

async function seeAnExpiredOne(page) {
  await page.click("#tab-expired");
  // The expired row is already on the "all" tab: wait for the tab's own list
  // to replace it (a timeout here fails like the count check below).
  await page
    .waitForFunction(() => document.querySelectorAll("#rows tr").length === 1, null, { timeout: STEP_TIMEOUT })
    .catch(() => {});
  await waitStatus(page, cfg.expiredId, "EXPIRED");
  assert.strictEqual(await row(page, cfg.expiredId).locator('[data-action="download"]').count(), 0);
  assert.strictEqual(await page.locator("#rows tr").count(), 1, "the expired tab shows only expired tasks");
  await shot(page, "04-expired-tab");
  await page.click("#tab-all");
  log("expired task", cfg.expiredId, "shown under its tab, without a download");
}

// A file password from the form (docs/configuration.md#password-protected-files-file-password):
// the field shows for a type that takes one, the strength rule is checked before anything is
// sent, the password leaves the form once sent, and the task carries a lock. An encrypted task
// that FAILED offers export-again with a new password instead of a retry.
async function protectAFileWithAPassword(page) {
  const before = await taskTotal();
  await fillForm(page, "CUSTOMER_LIST", "ACTIVE", "XLSX", "加密的导出");
  await page.locator("#create-password-row").waitFor({ state: "visible", timeout: STEP_TIMEOUT });
  assert.strictEqual(await page.getAttribute("#create-password", "type"), "password");
  assert((await page.locator("#create-password-rule").textContent()).includes("8–128"));
  await page.fill("#create-password", "short1");
  await page.click("#create-submit");
  await page.locator("#msg.error", { hasText: "8–128" }).waitFor({ timeout: STEP_TIMEOUT });
  assert.strictEqual(await page.getAttribute("#create-password", "aria-invalid"), "true");
  await page.fill("#create-password", "alllowercase");
  await page.click("#create-submit");
  await page.locator("#msg.error", { hasText: "两类" }).waitFor({ timeout: STEP_TIMEOUT });
  assert.strictEqual(await taskTotal(), before, "a refused password queued a task");
  await page.fill("#create-password", cfg.filePassword);
  const [request] = await Promise.all([
    page.waitForRequest((r) => r.url().endsWith("/export-tasks") && r.method() === "POST"),
    page.click("#create-submit"),
  ]);
  assert.strictEqual(JSON.parse(request.postData()).filePassword, cfg.filePassword);
  const created = page.locator("#created tr[data-id]").filter({ has: page.locator(".lock[data-encrypted]") });
  await created.waitFor({ timeout: STEP_TIMEOUT });
  const id = await created.getAttribute("data-id");
  assert.strictEqual(await page.inputValue("#create-password"), "", "the password stayed in the form");
  await waitStatus(page, id, "SUCCEEDED");
  assert.strictEqual(await row(page, id).locator(".lock").getAttribute("aria-label"), "文件已加密（需密码打开）");
  const task = await api("GET", "/export-tasks/" + id, cfg.aliceToken);
  assert.strictEqual(task.encrypted, true);
  assert.strictEqual(task.manifest.encrypted, true);
  await shot(page, "11-file-password");

  // The FAILED encrypted task: no retry, export again asks for a new password.
  const failed = row(page, cfg.encryptedFailedId);
  await failed.locator(".lock").waitFor({ timeout: STEP_TIMEOUT });
  assert.strictEqual(await failed.locator('[data-action="retry"]').count(), 0, "an encrypted task offers a retry");
  await failed.locator('[data-action="export-again"]').click();
  await page.locator("#again-password").waitFor({ timeout: STEP_TIMEOUT });
  await page.fill("#again-password", "weak");
  await page.click('[data-action="export-again-password"]');
  await page.locator("#msg.error", { hasText: "8–128" }).waitFor({ timeout: STEP_TIMEOUT });
  await page.fill("#again-password", cfg.filePassword + "-2");
  const [again] = await Promise.all([
    page.waitForRequest((r) => r.url().endsWith("/export-again") && r.method() === "POST"),
    page.click('[data-action="export-again-password"]'),
  ]);
  assert.strictEqual(JSON.parse(again.postData()).filePassword, cfg.filePassword + "-2");
  await page.locator("#msg.ok", { hasText: "已重新导出" }).waitFor({ timeout: STEP_TIMEOUT });
  const fresh = page.locator("#created tr[data-id]");
  const freshId = await fresh.getAttribute("data-id");
  assert.notStrictEqual(freshId, cfg.encryptedFailedId);
  assert.strictEqual(await fresh.locator(".lock").count(), 1);
  await waitStatus(page, freshId, "SUCCEEDED");
  log("file password: rule checked before sending, field cleared, lock shown; export again asked a new one");
  return [id, freshId];
}

async function searchAndLanguage(page) {
  await page.fill("#search", "浏览器");
  await page.waitForFunction(() => document.querySelectorAll("#rows tr").length === 1, null, { timeout: STEP_TIMEOUT });
  await page.fill("#search", "");
  await page.click("#lang");
  await page.locator("h1", { hasText: "Download center" }).waitFor();
  await shot(page, "05-english");
  await page.click("#lang");
  log("name search narrows the list; English switch works");
}

// RFC 4180 text (quoted fields may hold commas, quotes and line breaks) into
// rows of fields. Hand-written: the test's only CSV need, and the tool set
// stays playwright-core alone.
function parseCsv(text) {
  const rows = [];
  let row = [], field = "", quoted = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (quoted) {
      if (c === '"' && text[i + 1] === '"') { field += '"'; i++; }
      else if (c === '"') quoted = false;
      else field += c;
    } else if (c === '"') quoted = true;
    else if (c === ",") { row.push(field); field = ""; }
    else if (c === "\r" && text[i + 1] === "\n") continue;
    else if (c === "\n") { row.push(field); rows.push(row); row = []; field = ""; }
    else field += c;
  }
  if (field !== "" || row.length) { row.push(field); rows.push(row); }
  return rows;
}

// What the preview on the page shows: the header titles and each row's cells.
async function previewTable(page) {
  const table = page.locator("#preview .preview-table");
  await table.waitFor({ timeout: STEP_TIMEOUT });
  const titles = await table.locator("thead th").allTextContents();
  const rows = await table.locator("tbody tr").evaluateAll((trs) =>
    trs.map((tr) => Array.from(tr.cells, (td) => td.textContent)));
  return { titles, rows };
}

async function taskTotal() {
  return Number((await api("GET", "/export-tasks?page=1&size=1", cfg.aliceToken)).total);
}

// The first page of the task list, once the page shows the same as the API.
async function listedTasks(page) {
  const ids = (await api("GET", "/export-tasks?page=1&size=20", cfg.aliceToken)).records.map((t) => t.id);
  await page.waitForFunction((want) => JSON.stringify(Array.from(document.querySelectorAll("#rows tr[data-id]"),
    (r) => r.dataset.id)) === want, JSON.stringify(ids), { timeout: STEP_TIMEOUT });
  return ids;
}

async function clickPreview(page) {
  const [request] = await Promise.all([
    page.waitForRequest((r) => r.url().endsWith("/export-previews") && r.method() === "POST"),
    page.getByRole("button", { name: "预览 / Preview" }).click(),
  ]);
  await page.locator("#preview-button:not([disabled])").waitFor({ timeout: STEP_TIMEOUT });
  return JSON.parse(request.postData());
}

// The type, its first list parameter (status) when given, the format and the name.
async function fillForm(page, type, status, format, name) {
  await page.selectOption("#create-type", type);
  if (status) await page.locator("#create-params select").first().selectOption(status);
  await page.check(`input[name="format"][value="${format}"]`);
  await page.fill("#create-name", name);
}

// The preview shows what the API previews for the same body, queues nothing,
// and its rows are the first rows of the file the export then writes.
async function previewEqualsTheApiAndTheFile(page) {
  const before = await taskTotal();
  const listed = await listedTasks(page);
  await fillForm(page, "CUSTOMER_LIST", "ACTIVE", "CSV", "预览后导出");
  const body = await clickPreview(page);
  assert.deepStrictEqual(body, {
    exportType: "CUSTOMER_LIST", format: "CSV", taskName: "预览后导出", parameters: { status: "ACTIVE" },
    locale: "zh-CN",
  });
  const shown = await previewTable(page);
  const fromApi = await api("POST", "/export-previews", cfg.aliceToken, body);
  assert.deepStrictEqual(shown.titles, fromApi.columns.map((c) => c.title));
  assert.strictEqual(shown.rows.length, 20);
  assert.deepStrictEqual(shown.rows, fromApi.rows, "the page's preview differs from the API's");
  // A provider with more batches: "at least" the first batch of 300.
  await page.locator("#preview-status .count", { hasText: "至少 300 行" }).waitFor({ timeout: STEP_TIMEOUT });
  assert.strictEqual(await page.locator("#preview-status .warn").count(), 0);
  // Nothing queued: the same tasks on the page and through the API.
  await page.waitForTimeout(1500);  // an SSE event of a queued task would have arrived by now
  assert.strictEqual(await taskTotal(), before, "the preview queued a task");
  assert.deepStrictEqual(await listedTasks(page), listed);
  // A wide preview scrolls in its own box, never the 1366x768 page, and
  // takes keyboard focus to scroll by arrow keys.
  const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
  assert(overflow <= 1, "the preview makes the page scroll sideways by " + overflow + "px");
  const wrap = page.locator("#preview .preview-wrap");
  assert.strictEqual(await wrap.getAttribute("tabindex"), "0");
  assert.strictEqual(await wrap.getAttribute("role"), "region");
  assert(((await wrap.getAttribute("aria-label")) || "").length > 0, "the preview region has no name");
  await shot(page, "08-preview");

  // The submit button still starts the export, which writes those rows first.
  assert(await page.locator("#create-submit").isEnabled(), "submit is disabled after a preview");
  const earlier = await page.locator("#created tr[data-id]").getAttribute("data-id");
  await page.click("#create-submit");
  const created = page.locator(`#created tr[data-id]:not([data-id="${earlier}"])`);
  await created.waitFor({ timeout: STEP_TIMEOUT });
  const id = await created.getAttribute("data-id");
  await waitStatus(page, id, "SUCCEEDED");
  // Created from the zh-CN page: the task records the page's language.
  assert.strictEqual((await api("GET", "/export-tasks/" + id, cfg.aliceToken)).locale, "zh-CN");
  const res = await fetch(API + "/export-tasks/" + id + "/download", {
    headers: { Authorization: "Bearer " + cfg.aliceToken },
  });
  assert.strictEqual(res.status, 200);
  const csv = parseCsv((await res.text()).replace(/^\uFEFF/, ""));
  assert.deepStrictEqual(csv[0], shown.titles, "the file's header differs from the preview's");
  assert(csv.length > 21, "the export has only " + (csv.length - 1) + " rows");
  assert.deepStrictEqual(csv.slice(1, 21), shown.rows, "the file's first rows differ from the preview");
  log("preview: 20 rows equal to the API's preview and to the first rows of task", id,
    "(" + (csv.length - 1) + " rows); the preview queued nothing");
}

// A two-level header is drawn grouped, as the file groups it
// (docs/xlsx.md#grouped-headers): the group cell spans its columns, a
// shallower column's title spans down. The sample service sends one-level
// titles, so the preview's answer is given title paths on its way to the page.
async function groupedHeaderAndTheEnglishPage(page) {
  const paths = (cols) => cols.map((c, i) => i === 1 || i === 2 ? ["客户信息", c.title]
    : i === 3 ? ["账户", "余额", c.title] : [c.title]);
  let t = null;  // the titles the center answered
  await page.route("**/export-previews", async (route) => {
    const response = await route.fetch();
    const env = await response.json();
    t = env.data.columns.map((c) => c.title);
    paths(env.data.columns).forEach((p, i) => { env.data.columns[i].titlePath = p; });
    env.data.headerRows = 3;
    await route.fulfill({ response, json: env });
  });
  try {
    await fillForm(page, "CUSTOMER_LIST", "ACTIVE", "CSV", "分组表头");
    await clickPreview(page);
    await page.locator("#preview .preview-table").waitFor({ timeout: STEP_TIMEOUT });
  } finally {
    await page.unroute("**/export-previews");
  }
  assert(t && t.length > 4, "the preview has too few columns: " + t);
  const head = await page.locator("#preview .preview-table thead tr").evaluateAll((trs) =>
    trs.map((tr) => Array.from(tr.cells, (th) => [th.textContent, th.colSpan, th.rowSpan])));
  const rest = t.slice(4).map((x) => [x, 1, 3]);
  assert.deepStrictEqual(head, [
    [[t[0], 1, 3], ["客户信息", 2, 1], ["账户", 1, 1], ...rest],
    [[t[1], 1, 2], [t[2], 1, 2], ["余额", 1, 1]],
    [[t[3], 1, 1]],
  ], "the grouped header rows");
  // Chromium lays the group out over exactly its two columns, and the body's
  // columns under the header's.
  const box = (row, cell) => page.locator("#preview thead tr").nth(row).locator("th").nth(cell).boundingBox();
  const group = await box(0, 1);
  const left = await box(1, 0);
  const right = await box(1, 1);
  assert(Math.abs(group.x - left.x) < 1 && Math.abs(group.x + group.width - right.x - right.width) < 1,
    "the group cell does not span its columns: " + JSON.stringify({ group, left, right }));
  const firstCell = await page.locator("#preview tbody tr").first().locator("td").nth(3).boundingBox();
  const deepest = await box(2, 0);
  assert(Math.abs(firstCell.x - deepest.x) < 1, "the body's column 4 is not under its title");
  await shot(page, "12-preview-grouped");
  log("grouped header: 3 rows, the group over its 2 columns, shallower titles spanning down");

  // From the English page a create records "en".
  await page.click("#lang");
  await fillForm(page, "CUSTOMER_LIST", "INACTIVE", "CSV", "English export");
  const [request] = await Promise.all([
    page.waitForRequest((r) => r.url().endsWith("/export-tasks") && r.method() === "POST"),
    page.click("#create-submit"),
  ]);
  assert.strictEqual(JSON.parse(request.postData()).locale, "en");
  const created = page.locator("#created tr[data-id]");
  await page.locator("#created tr[data-id]", { hasText: "English export" }).waitFor({ timeout: STEP_TIMEOUT });
  const id = await created.getAttribute("data-id");
  await waitStatus(page, id, "SUCCEEDED");
  assert.strictEqual((await api("GET", "/export-tasks/" + id, cfg.aliceToken)).locale, "en");
  await page.click("#lang");
  assert.strictEqual(await page.locator("html").getAttribute("lang"), "zh-CN");
  log("create from the English page recorded locale en; from the zh-CN page zh-CN");
}

// A preview wider than the screen scrolls inside its box, by keyboard too
// (focus the region, press the right arrow), and never widens the page.
async function widePreviewScrollsInItsBox(page) {
  await page.setViewportSize({ width: 760, height: 768 });
  await page.click("#preview-button");
  const wrap = page.locator("#preview .preview-wrap");
  await wrap.waitFor({ timeout: STEP_TIMEOUT });
  const sizes = await wrap.evaluate((w) => ({ inner: w.scrollWidth, box: w.clientWidth }));
  assert(sizes.inner > sizes.box, "the preview is not wider than its box: " + JSON.stringify(sizes));
  const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
  assert(overflow <= 1, "the wide preview makes the page scroll sideways by " + overflow + "px");
  await wrap.focus();
  await page.keyboard.press("ArrowRight");
  await page.waitForFunction(() => document.querySelector("#preview .preview-wrap").scrollLeft > 0, null,
    { timeout: STEP_TIMEOUT });
  await shot(page, "11-preview-narrow");
  await page.setViewportSize({ width: 1366, height: 768 });
}

// Over max-rows: said before anything is queued, with the options the type
// allows, in both languages; a change of the form clears the preview.
async function previewOverTheLimit(page) {
  const before = await taskTotal();
  await fillForm(page, "ORDER_LIST_CAPPED", "PAID", "XLSX", "太大的导出");
  // By keyboard: focus the button and press Enter.
  await page.focus("#preview-button");
  const [request] = await Promise.all([
    page.waitForRequest((r) => r.url().endsWith("/export-previews")),
    page.keyboard.press("Enter"),
  ]);
  const fromApi = await api("POST", "/export-previews", cfg.aliceToken, JSON.parse(request.postData()));
  assert.strictEqual(fromApi.exceedsMaxRows, true);
  assert.deepStrictEqual(fromApi.suggestions, ["CSV", "SPLIT"]);
  const warn = page.locator("#preview-status .warn");
  await warn.waitFor({ timeout: STEP_TIMEOUT });
  assert.strictEqual(await warn.textContent(),
    "超过该导出类型的行数上限 100 行，提交后会失败。建议：缩小筛选范围、改用 CSV、拆分为多个文件");
  assert.strictEqual(await page.locator("#preview .preview-table tbody tr").count(), 20);
  assert.strictEqual(await taskTotal(), before, "the preview queued a task");
  assert(await page.locator("#create-submit").isEnabled(), "submit is disabled after a preview");
  await shot(page, "09-preview-over-limit");
  await page.click("#lang");
  assert.strictEqual(await warn.textContent(), "More than the 100 rows this export type allows; " +
    "the export would fail. Suggestions: narrow the filter; use CSV; split into several files");
  assert.strictEqual(await page.locator("#create-params select").first().inputValue(), "PAID",
    "the language switch lost the form's values");
  assert.strictEqual(await page.inputValue("#create-name"), "太大的导出");
  assert.strictEqual(await page.locator("#created .badge").textContent(), "Succeeded",
    "the created task above the list kept its old language");
  assert.strictEqual(await page.locator('input[name="format"]:checked').getAttribute("value"), "XLSX");
  await shot(page, "10-preview-over-limit-en");
  await page.click("#lang");
  // A changed parameter clears the preview: it no longer describes the form.
  await page.locator("#create-params select").first().selectOption("NEW");
  assert.strictEqual(await page.locator("#preview .preview-table").count(), 0, "a stale preview stayed");
  assert.strictEqual(await page.locator("#preview-status p").count(), 0);
  // So does another type.
  await page.click("#preview-button");
  await page.locator("#preview .preview-table").waitFor({ timeout: STEP_TIMEOUT });
  await page.selectOption("#create-type", "CUSTOMER_LIST");
  assert.strictEqual(await page.locator("#preview .preview-table").count(), 0, "a stale preview stayed");
  await widePreviewScrollsInItsBox(page);
  assert.strictEqual(await taskTotal(), before, "a preview queued a task");
  log("over max-rows: said before queuing, with the type's options, in zh and en; edits clear it");
}

async function narrowScreen(page) {
  await page.setViewportSize({ width: 390, height: 844 });
  await page.waitForTimeout(200);
  const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
  assert(overflow <= 1, "the narrow page scrolls sideways by " + overflow + "px");
  await shot(page, "06-narrow");
  log("narrow screen: no sideways scrolling");
}

async function keyboard(page) {
  await page.setViewportSize({ width: 1366, height: 768 });
  await page.focus("#tab-all");
  await page.keyboard.press("ArrowRight");
  const focused = await page.evaluate(() => document.activeElement.id);
  assert.strictEqual(focused, "tab-queued");
  assert.strictEqual(await page.getAttribute("#tab-queued", "aria-selected"), "true");
  await page.keyboard.press("Home");
  log("tabs move with the arrow keys");
}

// "Next" pages by cursor (after=nextCursor, never page=), through every task
// of the list exactly once, as the API's own cursor walk lists them; "Previous"
// comes back to the page before (docs/download-center.md#what-it-shows).
async function pagesWithTheCursor(page) {
  assert(cfg.history > 40, "the test needs more than two pages of tasks");
  await page.setViewportSize({ width: 1366, height: 768 });
  await page.click("#tab-all");
  const expected = [];
  for (let after = null, n = 0; n < 50; n++) {
    const data = await api("GET", "/export-tasks?size=20" + (after ? "&after=" + after : ""), cfg.aliceToken);
    expected.push(...data.records.map((t) => t.id));
    after = data.nextCursor;
    if (!after) break;
  }
  const idsShown = () => page.locator("#rows tr[data-id]").evaluateAll((rows) => rows.map((r) => r.dataset.id));
  await page.waitForFunction((first) => {
    const r = document.querySelector("#rows tr[data-id]");
    return r && r.dataset.id === first;
  }, expected[0], { timeout: STEP_TIMEOUT });
  const lists = [];
  const pages = [await idsShown()];
  page.on("request", (r) => { if (r.url().includes("/export-tasks?")) lists.push(r.url()); });
  while (!(await page.locator("#next").isDisabled())) {
    const before = pages[pages.length - 1];
    await page.click("#next");
    await page.waitForFunction((old) => {
      const r = document.querySelector("#rows tr[data-id]");
      return r && !old.includes(r.dataset.id);
    }, before, { timeout: STEP_TIMEOUT });
    pages.push(await idsShown());
    assert(pages.length < 20, "next never ends");
  }
  const shown = pages.flat();
  assert.deepStrictEqual(shown, expected, "the pages differ from the API's cursor walk");
  assert.strictEqual(new Set(shown).size, shown.length, "a task was shown twice");
  const nexts = lists.filter((u) => u.includes("after="));
  assert(nexts.length >= pages.length - 1, "next did not ask with after=: " + lists);
  assert(!lists.some((u) => /[?&]page=/.test(u)), "the page still asks by page=: " + lists);
  const info = await page.textContent("#page-info");
  assert(info.includes("第 " + pages.length + " / " + pages.length + " 页"), "page info: " + info);
  await shot(page, "12-last-page");
  await page.click("#prev");
  await page.waitForFunction((want) => {
    const r = document.querySelector("#rows tr[data-id]");
    return r && r.dataset.id === want;
  }, pages[pages.length - 2][0], { timeout: STEP_TIMEOUT });
  assert.deepStrictEqual(await idsShown(), pages[pages.length - 2], "previous did not come back");
  await page.click("#tab-all");
  log("paged by cursor through", shown.length, "tasks on", pages.length, "pages; previous comes back");
}

async function secondTenantSeesNone(context, aliceIds) {
  const page = await openPage(context, cfg.bobToken, { width: 1366, height: 768 });
  await page.waitForFunction(() => !document.getElementById("empty").hidden, null, { timeout: STEP_TIMEOUT });
  // A change of the first tenant while the second tenant's page listens.
  await api("POST", "/export-tasks", cfg.aliceToken, { exportType: "CUSTOMER_LIST", taskName: "另一租户不可见" });
  await page.waitForTimeout(2500);
  const ids = await page.locator("#rows tr[data-id]").evaluateAll((rows) => rows.map((r) => r.dataset.id));
  assert.deepStrictEqual(ids, [], "the second tenant sees tasks: " + ids);
  for (const id of aliceIds) assert.strictEqual(await row(page, id).count(), 0);
  await shot(page, "07-second-tenant");
  await page.close();
  log("second tenant's page shows none of the first tenant's tasks");
}

(async () => {
  const started = Date.now();
  const context = await launch({ acceptDownloads: true, timezoneId: "Asia/Shanghai" });
  let page;
  try {
    page = await openPage(context, cfg.aliceToken, { width: 1366, height: 768 });
    await shot(page, "00-signed-in");
    await signInCleansTheAddressBar(page);
    const id = await createFromTheFormAndWatchProgress(page);
    await downloadMatchesTheApi(page, id);
    await timelineInTheDetail(page, id);
    await cancelARunningOne(page);
    await retryAFailedOne(page);
    const again = await exportAStaleOneAgain(page);
    await seeAnExpiredOne(page);
    const encrypted = await protectAFileWithAPassword(page);
    await searchAndLanguage(page);
    await keyboard(page);
    await previewEqualsTheApiAndTheFile(page);
    await groupedHeaderAndTheEnglishPage(page);
    await previewOverTheLimit(page);
    await narrowScreen(page);
    await pagesWithTheCursor(page);
    await secondTenantSeesNone(context, [id, cfg.failedId, cfg.expiredId, cfg.staleId, again, ...encrypted]);
    log("all checks passed in", Math.round((Date.now() - started) / 1000), "s");
  } catch (e) {
    if (page) await shot(page, "failure").catch(() => {});
    console.error("[page-test] FAILED:", e && e.stack ? e.stack : e);
    process.exitCode = 1;
  } finally {
    await context.close();
  }
})();
