// The operators' console of the download-center page in a real browser
// (Debian chromium, headless, playwright-core) against a real center, started
// by page_browser_test.py (test_the_operator_console_in_chromium), which
// passes the addresses, tokens and prepared task ids in EC_PAGE_TEST (JSON).
//
// Each step prints one line; a failed check throws and exits non-zero after a
// screenshot of the moment. Screenshots land in `artifacts`.
"use strict";

const assert = require("assert");
const { cfg, API, STEP_TIMEOUT, logger, api, shot, launch } = require("./browser_kit");

const log = logger("[console-test]");

async function openConsole(context, token) {
  const page = await context.newPage();
  await page.setViewportSize({ width: 1366, height: 900 });
  page.on("pageerror", (e) => log("page error:", e.message));
  await page.goto(cfg.base + "/#token=" + token);
  await page.locator("#app").waitFor({ state: "visible" });
  await page.locator("#view-toggle").waitFor({ state: "visible", timeout: STEP_TIMEOUT });
  await page.locator("#view-toggle").click();
  await page.locator("#console").waitFor({ state: "visible" });
  await page.locator("#op-rows tr").first().waitFor({ timeout: STEP_TIMEOUT }).catch(() => {});
  return page;
}

async function idsShown(page) {
  return page.locator("#op-rows tr").evaluateAll((rows) => rows.map((r) => r.dataset.id).sort());
}

async function aUserSeesNoConsole(context) {
  const page = await context.newPage();
  const asked = page.waitForResponse((r) => r.url().includes("/operator/queue-health"), { timeout: STEP_TIMEOUT });
  await page.goto(cfg.base + "/#token=" + cfg.aliceToken);
  await page.locator("#app").waitFor({ state: "visible" });
  assert.strictEqual((await (await asked).json()).code, "403");
  assert(await page.locator("#view-toggle").isHidden(), "a plain user was offered the console");
  assert(await page.locator("#console").isHidden());
  await page.close();
  log("a user without the permission sees no console");
}

async function searchAcrossUsers(page) {
  const ids = await idsShown(page);
  assert.deepStrictEqual(ids, [...cfg.tenant1Ids].sort(), "the console lists every user's task of tenant 1");
  const users = await page.locator("#op-rows td.user").allTextContents();
  assert(users.includes("alice") && users.includes("carol"), "users: " + users);
  await page.locator("#op-user").fill("carol");
  await page.locator("#op-search button[type=submit]").click();
  await page.waitForFunction(() => [...document.querySelectorAll("#op-rows td.user")].every((c) => c.textContent === "carol")
    && document.querySelectorAll("#op-rows tr").length === 1, null, { timeout: STEP_TIMEOUT });
  await page.locator("#op-user").fill("");
  await page.locator("#op-status").selectOption("FAILED");
  await page.locator("#op-code").fill("PROVIDER_ERROR");
  await page.locator("#op-search button[type=submit]").click();
  await page.waitForFunction((n) => document.querySelectorAll('#op-rows tr[data-status="FAILED"]').length === n
    && document.querySelectorAll("#op-rows tr").length === n, cfg.failedIds.length, { timeout: STEP_TIMEOUT });
  log("search across users by user, status and failure code");
}

async function taskDetail(page) {
  await page.locator(`#op-rows tr[data-id="${cfg.failedIds[0]}"] button[data-action=detail]`).click();
  await page.locator(`#op-detail[data-id="${cfg.failedIds[0]}"]`).waitFor({ timeout: STEP_TIMEOUT });
  const version = await page.locator("#op-dispatch-version").textContent();
  const fromApi = await api("GET", "/operator/tasks/" + cfg.failedIds[0], cfg.op1Token);
  assert.strictEqual(version, String(fromApi.task.dispatchVersion));
  assert.strictEqual(await page.locator("#op-outbox-state").textContent(),
    fromApi.commands[fromApi.commands.length - 1].status);
  assert(await page.locator("#op-commands tr").count() >= 1, "the outbox rows are shown");
  // The timeline of another user's task, as the API gives it to the operator.
  const kinds = await page.locator("#op-timeline li").evaluateAll((items) => items.map((i) => i.dataset.kind));
  assert.deepStrictEqual(kinds, fromApi.timeline.map((e) => e.kind), "the console's timeline is not the API's");
  assert.strictEqual(kinds[0], "CREATED");
  assert(kinds.includes("CLAIMED") && kinds.includes("FINISHED"), "kinds: " + kinds);
  assert.strictEqual(await page.locator('#op-timeline li[data-kind="CREATED"] time').getAttribute("datetime"),
    fromApi.timeline[0].at);
  await shot(page, "console-detail");
  log("task detail: dispatch version", version, "outbox", fromApi.commands[0].status);
}

async function bulkRetryWithConfirmation(page) {
  // The filter of the last search (FAILED + PROVIDER_ERROR) is still in the form.
  await page.locator("#op-bulk-retry").click();
  await page.locator("#op-confirm").waitFor({ state: "visible", timeout: STEP_TIMEOUT });
  assert.strictEqual(await page.locator("#op-confirm").getAttribute("data-matched"), String(cfg.failedIds.length));
  const text = await page.locator("#op-confirm-text").textContent();
  assert(text.includes(String(cfg.failedIds.length)), "the confirmation names the count: " + text);
  // Nothing happened before the confirmation.
  for (const id of cfg.failedIds) {
    assert.strictEqual((await api("GET", "/operator/tasks/" + id, cfg.op1Token)).task.status, "FAILED");
  }
  await shot(page, "console-confirm");
  await page.locator("#op-confirm-yes").click();
  await page.waitForFunction(() => /\d/.test(document.getElementById("op-bulk-result").textContent), null,
    { timeout: STEP_TIMEOUT });
  for (const id of cfg.failedIds) {
    const t = (await api("GET", "/operator/tasks/" + id, cfg.op1Token)).task;
    assert.notStrictEqual(t.status, "FAILED", "task " + id + " was not retried");
    assert.strictEqual(t.dispatchVersion, 2);
  }
  await page.locator('#op-audit tr[data-action="RETRY"]').first().waitFor({ timeout: STEP_TIMEOUT });
  // The open detail follows: its task is at version 2 now.
  await page.waitForFunction(() => document.getElementById("op-dispatch-version").textContent === "2", null,
    { timeout: STEP_TIMEOUT });
  // ... and its timeline records the operator's retry.
  await page.locator('#op-timeline li[data-kind="MANUAL_RETRY"]').waitFor({ timeout: STEP_TIMEOUT });
  const audit = await api("GET", "/operator/bulk-actions", cfg.op1Token);
  assert.strictEqual(audit.records[0].matched, String(cfg.failedIds.length));
  assert.strictEqual(audit.records[0].succeeded, String(cfg.failedIds.length));
  assert.strictEqual(audit.records[0].actor, "op1");
  log("bulk retry: counted", cfg.failedIds.length, "confirmed, retried, audited");
}

async function statsAndHealth(page) {
  await page.locator('#op-stats table[data-window="24h"] tr[data-type="CUSTOMER_LIST"]').waitFor({ timeout: STEP_TIMEOUT });
  const count = await page.locator('#op-stats table[data-window="24h"] tr[data-type="CUSTOMER_LIST"] td.count').textContent();
  const stats = await api("GET", "/operator/stats", cfg.op1Token);
  const apiCount = stats.windows[0].types.find((s) => s.exportType === "CUSTOMER_LIST").count;
  assert.strictEqual(count.replace(/[^0-9]/g, ""), apiCount);
  await page.locator('#op-dead tr[data-id] button[data-action=redeliver]').first().waitFor({ timeout: STEP_TIMEOUT });
  assert.strictEqual(await page.locator("#op-dead-count").textContent(), "1");
  await page.locator(`#op-dead tr[data-id="${cfg.deadId}"] button[data-action=redeliver]`).click();
  await page.locator("#op-msg.ok").waitFor({ timeout: STEP_TIMEOUT });
  await page.locator('#op-audit tr[data-action="REDELIVER"]').waitFor({ timeout: STEP_TIMEOUT });
  await shot(page, "console-health");
  log("figures per type and queue health; a dead delivery re-delivered");
}

async function languageSwitch(page) {
  await page.locator("#lang").click();
  await page.waitForFunction(() => document.documentElement.lang === "en");
  assert.strictEqual(await page.locator("#op-stats-title").textContent(), "By export type");
  assert.strictEqual(await page.locator("#view-toggle").textContent(), "Back to my exports");
  await page.locator("#lang").click();
  await page.waitForFunction(() => document.documentElement.lang === "zh-CN");
  log("the console follows the page's language");
}

async function secondTenantSeesNothing(context) {
  const page = await openConsole(context, cfg.op2Token);
  await page.waitForFunction(() => document.getElementById("op-total").textContent !== "", null, { timeout: STEP_TIMEOUT });
  const ids = await idsShown(page);
  assert.deepStrictEqual(ids, [cfg.tenant2Id], "tenant 2's operator sees only tenant 2's task");
  const html = await page.locator("#console").innerHTML();
  for (const id of cfg.tenant1Ids) assert(!html.includes(id), "tenant 1's task " + id + " shown to tenant 2");
  assert(!html.includes("alice") && !html.includes("carol"), "tenant 1's users shown to tenant 2");
  await page.waitForFunction(() => document.getElementById("op-dead-count") !== null, null, { timeout: STEP_TIMEOUT });
  assert.strictEqual(await page.locator("#op-dead-count").textContent(), "0");
  // Its figures count its own task only.
  const own = page.locator('#op-stats table[data-window="24h"] tr[data-type="CUSTOMER_LIST"] td.count');
  await own.waitFor({ timeout: STEP_TIMEOUT });
  assert.strictEqual(await own.textContent(), "1");
  // Naming tenant 1 is refused.
  await page.locator("#op-tenant").fill("1");
  await page.locator("#op-search button[type=submit]").click();
  await page.locator("#op-msg.error").waitFor({ timeout: STEP_TIMEOUT });
  assert.deepStrictEqual(await idsShown(page), []);
  // The detail of a tenant 1 task answers like a missing one.
  const res = await fetch(API + "/operator/tasks/" + cfg.tenant1Ids[0], { headers: { Authorization: "Bearer " + cfg.op2Token } });
  assert.strictEqual((await res.json()).code, "404");
  await shot(page, "console-tenant2");
  await page.close();
  log("the second tenant's operator sees nothing of the first");
}

(async () => {
  const context = await launch();
  let page = null;
  try {
    await aUserSeesNoConsole(context);
    page = await openConsole(context, cfg.op1Token);
    await searchAcrossUsers(page);
    await taskDetail(page);
    await bulkRetryWithConfirmation(page);
    await statsAndHealth(page);
    await languageSwitch(page);
    await secondTenantSeesNothing(context);
    console.log("all checks passed");
  } catch (e) {
    if (page) await shot(page, "console-failure").catch(() => {});
    console.error(e);
    process.exitCode = 1;
  } finally {
    await context.close();
  }
})();
