// The "Subscriptions / 订阅" view of the download-center page and the
// console's subscription list, in a real browser (Debian chromium, headless,
// playwright-core) against a real center, started by page_browser_test.py
// (test_subscriptions_in_chromium), which passes the address and tokens in
// EC_PAGE_TEST (JSON).
//
// The browser runs in Europe/Berlin: neither the machine's UTC nor the
// subscriptions' zones, so a next run shown in local time is told apart from
// one shown in the schedule's zone. Each step prints one line; a failed check
// throws and exits non-zero after a screenshot of the moment.
"use strict";

const assert = require("assert");
const { cfg, API, STEP_TIMEOUT, logger, api, shot, launch } = require("./browser_kit");

const log = logger("[subscriptions-test]");
const LOCAL_ZONE = "Europe/Berlin";

// What each language's page says, as the checks need it.
const SAYS = {
  "zh-CN": {
    view: "订阅", weekly: "每周一、周三 09:00", daily: "每天 08:30", hourly: "每小时第 15 分",
    zone: (z) => "时区 " + z, paused: "已手动暂停", state: { ACTIVE: "生效中", PAUSED: "已暂停" },
    cronField: "Cron 表达式", emailsField: "邮件收件人", badZone: "未知的时区：Mars/Olympus",
    editTitle: (n) => "编辑订阅：" + n, confirm: (n) => "删除订阅“" + n + "”",
  },
  en: {
    view: "Subscriptions", weekly: "every Mon, Wed at 09:00", daily: "every day at 08:30",
    hourly: "every hour at minute 15", zone: (z) => "time zone " + z, paused: "Paused by hand",
    state: { ACTIVE: "Active", PAUSED: "Paused" },
    cronField: "Cron expression", badMinute: "The minute must be a whole number from 0 to 59", emailsField: "E-mail recipients", badZone: "Unknown time zone: Mars/Olympus",
    editTitle: (n) => "Edit subscription: " + n, confirm: (n) => "Delete the subscription \u201c" + n + "\u201d",
  },
};

// A DATE parameter's controls on the subscription form: its range (or
// "fixed"), its date, the end of the range it takes.
const rel = (name) => `#sub-params fieldset[data-param="${name}"] select[data-param]`;
const bound = (name) => `#sub-params fieldset[data-param="${name}"] select[id$="-bound"]`;
const date = (name) => `#sub-params fieldset[data-param="${name}"] input[type="date"]`;

function subRow(page, id) {
  return page.locator(`#sub-rows tr[data-id="${id}"]`);
}

async function mine() {
  return (await api("GET", "/subscriptions", cfg.aliceToken)).items;
}

// The body of the next POST or PUT to /subscriptions the page sends.
function nextSubscriptionBody(page, method) {
  return page.waitForRequest((r) => r.method() === method && /\/subscriptions(\/\d+)?$/.test(new URL(r.url()).pathname),
    { timeout: STEP_TIMEOUT }).then((r) => JSON.parse(r.postData()));
}

// The page's message after an action, once it says something of this kind.
async function message(page, kind) {
  await page.locator("#msg." + kind).filter({ hasText: /./ }).waitFor({ timeout: STEP_TIMEOUT });
  return page.locator("#msg").textContent();
}

async function submitRefused(page, field, control, says) {
  await page.locator("#msg").evaluate((m) => { m.textContent = ""; m.className = "msg"; });
  await page.click("#sub-submit");
  const text = await message(page, "error");
  assert(text.includes(says), `the error does not name the field in words (${says}): ${text}`);
  if (field) assert(text.includes(field), `the error does not name ${field}: ${text}`);
  assert.strictEqual(await page.locator(control).getAttribute("aria-invalid"), "true", control + " not marked");
  return text;
}

// Each next run in the browser's own zone (Europe/Berlin), as the API gives
// it: the text is that instant formatted in LOCAL_ZONE by the browser's Intl.
async function nextRunsAreLocal(page, id, lang) {
  const s = await api("GET", "/subscriptions/" + id, cfg.aliceToken);
  assert.strictEqual(s.nextRuns.length, 3, "next runs: " + JSON.stringify(s.nextRuns));
  const times = subRow(page, id).locator("td.next time");
  await page.waitForFunction(([sel, n]) => document.querySelectorAll(sel).length === n,
    [`#sub-rows tr[data-id="${id}"] td.next time`, 3], { timeout: STEP_TIMEOUT });
  assert.deepStrictEqual(await times.evaluateAll((ts) => ts.map((x) => x.getAttribute("datetime"))), s.nextRuns);
  const expected = await page.evaluate(([isos, lang, zone]) => isos.map((iso) => new Date(iso).toLocaleString(lang, {
    year: "numeric", month: "2-digit", day: "2-digit", hour: "2-digit", minute: "2-digit", second: "2-digit",
    timeZone: zone,
  })), [s.nextRuns, lang, LOCAL_ZONE]);
  assert.deepStrictEqual(await times.allTextContents(), expected, "next runs are not in the browser's time zone");
  return s;
}

// zh-CN: from the create form, bad input refused naming the field, a weekly
// subscription with relative dates and a recipient; pause, resume, run now
// (the run's task seen in the history and the list), edit, "subscribe" on a
// task, delete with confirmation.
async function theChineseLifecycle(page) {
  const L = SAYS["zh-CN"];
  assert.strictEqual(await page.locator("#view-subs").textContent(), L.view);
  await page.selectOption("#create-type", "ORDER_LIST");
  await page.fill("#create-name", "每周订单");
  await page.click("#create-subscribe");
  await page.locator("#subs-view").waitFor({ state: "visible", timeout: STEP_TIMEOUT });
  assert.strictEqual(await page.locator("#view-subs").getAttribute("aria-selected"), "true");
  assert.strictEqual(await page.locator("#sub-type").inputValue(), "ORDER_LIST");
  assert.strictEqual(await page.locator("#sub-name").inputValue(), "每周订单");
  log("\u201c订阅…\u201d on the create form fills the subscription form");

  // Refused, each naming its field: a cron more often than the minimum (the
  // server), a zone the browser does not know (the page), a recipient outside
  // the allowed domains (the server). Nothing is created.
  await page.selectOption("#sub-preset", "custom");
  await page.fill("#sub-cron", "* * * * *");
  await submitRefused(page, "schedule", "#sub-cron", L.cronField);
  await page.selectOption("#sub-preset", "weekly");
  await page.fill("#sub-zone", "Mars/Olympus");
  await page.locator('#sub-days input[value="MON"]').check();
  await submitRefused(page, null, "#sub-zone", L.badZone);
  await page.fill("#sub-zone", "");
  await page.fill("#sub-emails", "alice@example.com, bob@gmail.com");
  await submitRefused(page, "delivery.emails[1]", "#sub-emails", L.emailsField);
  assert.deepStrictEqual(await mine(), [], "a refused form created a subscription");
  log("bad cron, unknown zone, outside recipient: refused naming the field; nothing created");

  // The weekly one: Monday and Wednesday at 09:00 in the type's zone (empty:
  // the definition's, Asia/Shanghai), last week's orders, mailed, not empty.
  await page.locator('#sub-days input[value="WED"]').check();
  await page.fill("#sub-time", "09:00");
  await page.selectOption(rel("dateFrom"), "last-week");
  await page.selectOption(rel("dateTo"), "last-week");
  assert.strictEqual(await page.locator(bound("dateTo")).inputValue(), "end", "dateTo takes the range's end");
  await page.fill("#sub-emails", "alice@example.com");
  await page.locator("#sub-skip-empty").check();
  assert((await page.locator("#sub-words").textContent()).startsWith(L.weekly));
  const sent = nextSubscriptionBody(page, "POST");
  await page.click("#sub-submit");
  const body = await sent;
  assert.deepStrictEqual(body.schedule, { preset: "weekly", days: ["MON", "WED"], time: "09:00" });
  assert.deepStrictEqual(body.parameters.dateFrom, { relative: "last-week", bound: "start" });
  assert.deepStrictEqual(body.parameters.dateTo, { relative: "last-week", bound: "end" });
  assert.deepStrictEqual(body.delivery, { emails: ["alice@example.com"], attach: false, skipIfEmpty: true });
  assert.strictEqual(body.locale, "zh-CN");
  assert(!("timeZone" in body), "an empty zone is the definition's: not sent");
  await message(page, "ok");
  const [created] = await mine();
  assert(created, "nothing created");
  const id = created.id;
  await subRow(page, id).waitFor({ timeout: STEP_TIMEOUT });
  assert.strictEqual(created.timeZone, "Asia/Shanghai");
  assert.strictEqual(await subRow(page, id).locator(".words").textContent(), L.weekly);
  assert.strictEqual(await subRow(page, id).locator(".zone").textContent(), L.zone("Asia/Shanghai"));
  const s = await nextRunsAreLocal(page, id, "zh-CN");
  // 09:00 in Shanghai is 02:00 in Berlin in winter, 03:00 in summer.
  for (const iso of s.nextRuns) {
    const shanghai = new Date(iso).toLocaleString("en-GB", { timeZone: "Asia/Shanghai", weekday: "short", hour: "2-digit", minute: "2-digit" });
    assert(/^(Mon|Wed) 09:00$/.test(shanghai), "a next run is not Mon/Wed 09:00 in Shanghai: " + shanghai);
  }
  const firstShown = await subRow(page, id).locator("td.next time").first().textContent();
  assert(/ 0[23]:00:00$/.test(firstShown), "the next run is not shown in Berlin time: " + firstShown);
  await shot(page, "sub-01-created");
  log("created", id, "weekly Mon/Wed 09:00 Asia/Shanghai; next runs shown in local time:", firstShown);

  await pauseAndResume(page, id, L);
  const taskId = await runNowAndSeeItsTask(page, id, "每周订单");
  // The run's task resolved the relative dates to fixed ones.
  const task = await api("GET", "/export-tasks/" + taskId, cfg.aliceToken);
  assert.strictEqual(task.exportType, "ORDER_LIST");
  assert(/^\d{4}-\d{2}-\d{2}$/.test(task.parameters.dateFrom), "dateFrom: " + JSON.stringify(task.parameters));
  assert(/^\d{4}-\d{2}-\d{2}$/.test(task.parameters.dateTo), "dateTo: " + JSON.stringify(task.parameters));
  assert.strictEqual((new Date(task.parameters.dateTo) - new Date(task.parameters.dateFrom)) / 86400000, 6,
    "last week is 7 days: " + JSON.stringify(task.parameters));

  // Edit: daily at 08:30, with the version the page read.
  await page.click("#view-subs");
  await subRow(page, id).locator('[data-action="edit"]').click();
  assert.strictEqual(await page.locator("#sub-form-title").textContent(), L.editTitle("每周订单"));
  assert.strictEqual(await page.locator("#sub-preset").inputValue(), "weekly");
  assert(await page.locator('#sub-days input[value="WED"]').isChecked());
  assert.strictEqual(await page.locator(rel("dateFrom")).inputValue(), "last-week");
  assert.strictEqual(await page.locator("#sub-emails").inputValue(), "alice@example.com");
  const before = await api("GET", "/subscriptions/" + id, cfg.aliceToken);
  await page.selectOption("#sub-preset", "daily");
  await page.fill("#sub-time", "08:30");
  const put = nextSubscriptionBody(page, "PUT");
  await page.click("#sub-submit");
  assert.strictEqual((await put).version, before.version);
  await message(page, "ok");
  await subRow(page, id).locator(".words", { hasText: L.daily }).waitFor({ timeout: STEP_TIMEOUT });
  const after = await api("GET", "/subscriptions/" + id, cfg.aliceToken);
  assert.strictEqual(after.schedule.preset, "daily");
  assert.strictEqual(after.schedule.time, "08:30");
  assert.notStrictEqual(after.version, before.version);
  assert.deepStrictEqual(after.parameters.dateFrom, { relative: "last-week", bound: "start" });
  assert.strictEqual(await page.locator("#sub-form").getAttribute("data-mode"), "create", "the form left edit mode");
  log("edited to daily 08:30 (PUT with version", before.version + ")");

  // Changed elsewhere while the form edits it: the save is refused (409), the
  // form shows what it is now.
  await subRow(page, id).locator('[data-action="edit"]').click();
  await api("PUT", "/subscriptions/" + id, cfg.aliceToken, {
    exportType: after.exportType, format: after.format, taskName: after.taskName, parameters: after.parameters,
    schedule: { preset: "daily", time: "07:00" }, timeZone: after.timeZone, businessDaysOnly: after.businessDaysOnly,
    delivery: after.delivery, version: after.version });
  await page.fill("#sub-time", "10:00");
  await page.click("#sub-submit");
  assert((await message(page, "error")).includes("已在别处被修改"), "a stale save is not said");
  await page.waitForFunction(() => document.getElementById("sub-time").value === "07:00", null, { timeout: STEP_TIMEOUT });
  assert.strictEqual((await api("GET", "/subscriptions/" + id, cfg.aliceToken)).schedule.time, "07:00");
  await page.click("#sub-cancel-edit");
  log("a save over a change made elsewhere: refused, the form read again");

  // "Subscribe" on a task of the list: the form filled from that task.
  await page.click("#view-exports");
  const taskRow = page.locator(`#rows tr[data-id="${taskId}"]`);
  await taskRow.waitFor({ timeout: STEP_TIMEOUT });
  await taskRow.locator('[data-action="subscribe"]').click();
  await page.locator("#subs-view").waitFor({ state: "visible" });
  assert.strictEqual(await page.locator("#sub-type").inputValue(), "ORDER_LIST");
  assert.strictEqual(await page.locator("#sub-name").inputValue(), task.taskName);
  assert.strictEqual(await page.locator(rel("dateFrom")).inputValue(), "");
  assert.strictEqual(await page.locator(date("dateFrom")).inputValue(), task.parameters.dateFrom);
  log("\u201c订阅\u201d on a task fills the form from it");

  // Delete: nothing before the confirmation.
  await subRow(page, id).locator('[data-action="delete"]').click();
  await page.locator("#sub-confirm").waitFor({ state: "visible" });
  assert((await page.locator("#sub-confirm-text").textContent()).startsWith(L.confirm("每周订单")));
  await api("GET", "/subscriptions/" + id, cfg.aliceToken);
  await shot(page, "sub-02-confirm-delete");
  await page.click("#sub-confirm-yes");
  await subRow(page, id).waitFor({ state: "detached", timeout: STEP_TIMEOUT });
  const gone = await fetch(API + "/subscriptions/" + id, { headers: { Authorization: "Bearer " + cfg.aliceToken } });
  assert.strictEqual((await gone.json()).code, "404");
  log("deleted after the confirmation");
}

async function pauseAndResume(page, id, L) {
  await subRow(page, id).locator('[data-action="pause"]').click();
  await page.locator(`#sub-rows tr[data-id="${id}"][data-state="PAUSED"]`).waitFor({ timeout: STEP_TIMEOUT });
  const paused = await api("GET", "/subscriptions/" + id, cfg.aliceToken);
  assert.strictEqual(paused.state, "PAUSED");
  assert.strictEqual(await subRow(page, id).locator(".badge").first().textContent(), L.state.PAUSED);
  assert.strictEqual(await subRow(page, id).locator(".why").textContent(), L.paused);
  assert.strictEqual(await subRow(page, id).locator("td.next time").count(), 0, "a paused one shows next runs");
  await shot(page, "sub-paused-" + L.view);
  await subRow(page, id).locator('[data-action="resume"]').click();
  await page.locator(`#sub-rows tr[data-id="${id}"][data-state="ACTIVE"]`).waitFor({ timeout: STEP_TIMEOUT });
  assert.strictEqual((await api("GET", "/subscriptions/" + id, cfg.aliceToken)).state, "ACTIVE");
  assert.strictEqual(await subRow(page, id).locator(".badge").first().textContent(), L.state.ACTIVE);
  await subRow(page, id).locator("td.next time").first().waitFor({ timeout: STEP_TIMEOUT });
  log("paused (", L.paused, ") and resumed");
}

// Run now: the run in the history with its task, which runs to SUCCEEDED
// (live) and shows in the task list.
async function runNowAndSeeItsTask(page, id, name) {
  await subRow(page, id).locator('[data-action="run"]').click();
  const run = page.locator(`#history-${id} table.runs tr[data-task]`).first();
  await run.waitFor({ timeout: STEP_TIMEOUT });
  const taskId = await run.getAttribute("data-task");
  const runs = (await api("GET", "/subscriptions/" + id + "/runs", cfg.aliceToken)).items;
  const fromApi = runs.find((r) => String(r.taskId) === taskId);
  assert(fromApi, "the history's task is not the API's run: " + JSON.stringify(runs));
  assert.strictEqual(fromApi.outcome, "CREATED");
  assert.strictEqual(await run.getAttribute("data-outcome"), "CREATED");
  await run.locator('.badge[data-status="SUCCEEDED"]').waitFor({ timeout: 60000 });
  const task = await api("GET", "/export-tasks/" + taskId, cfg.aliceToken);
  assert.strictEqual(task.taskName, name);
  // The last run's outcome on the row.
  await subRow(page, id).locator('td.last [data-outcome="CREATED"]').waitFor({ timeout: STEP_TIMEOUT });
  await shot(page, "sub-run-" + id);
  await run.locator('[data-action="show-task"]').click();
  await page.locator("#exports-view").waitFor({ state: "visible" });
  await page.locator(`#created tr[data-id="${taskId}"][data-status="SUCCEEDED"]`).waitFor({ timeout: STEP_TIMEOUT });
  await page.locator(`#rows tr[data-id="${taskId}"]`).waitFor({ timeout: STEP_TIMEOUT });
  log("run now: task", taskId, "in the history (CREATED, SUCCEEDED) and in the list");
  return taskId;
}

// English: an hourly one in Asia/Kolkata (UTC+05:30: minute 15 there is
// minute 45 in Berlin) from the subscriptions form; a cron that never fires
// (the server) and a minute out of range (the page) refused in English;
// pause, resume, run now.
async function theEnglishLifecycle(page) {
  const L = SAYS.en;
  await page.click("#lang");
  await page.waitForFunction(() => document.documentElement.lang === "en");
  assert.strictEqual(await page.locator("#view-subs").textContent(), L.view);
  // The views are tabs: the arrow keys move between them.
  await page.click("#view-exports");
  await page.focus("#view-exports");
  await page.keyboard.press("ArrowRight");
  await page.locator("#subs-view").waitFor({ state: "visible" });
  assert.strictEqual(await page.evaluate(() => document.activeElement.id), "view-subs");
  assert.strictEqual(await page.locator("#view-subs").getAttribute("aria-selected"), "true");
  assert(await page.locator("#exports-view").isHidden());
  assert.strictEqual(await page.locator("#sub-form-title").textContent(), "New subscription");
  await page.selectOption("#sub-type", "CUSTOMER_LIST");
  await page.fill("#sub-name", "Hourly customers");
  await page.selectOption("#sub-preset", "custom");
  await page.fill("#sub-cron", "0 9 30 2 *");
  await submitRefused(page, "schedule", "#sub-cron", L.cronField);
  await page.selectOption("#sub-preset", "hourly");
  await page.fill("#sub-minute", "75");
  await submitRefused(page, null, "#sub-minute", L.badMinute);
  await page.fill("#sub-minute", "15");
  await page.fill("#sub-zone", "Asia/Kolkata");
  assert((await page.locator("#sub-words").textContent()).startsWith(L.hourly));
  const sent = nextSubscriptionBody(page, "POST");
  await page.click("#sub-submit");
  const body = await sent;
  assert.deepStrictEqual(body.schedule, { preset: "hourly", minute: 15 });
  assert.strictEqual(body.timeZone, "Asia/Kolkata");
  assert.strictEqual(body.locale, "en");
  assert.strictEqual(await message(page, "ok"), "Subscription created: Hourly customers");
  const created = (await mine()).find((x) => x.taskName === "Hourly customers");
  assert(created, "not created");
  const id = created.id;
  await subRow(page, id).waitFor({ timeout: STEP_TIMEOUT });
  assert.strictEqual(await subRow(page, id).locator(".words").textContent(), L.hourly);
  assert.strictEqual(await subRow(page, id).locator(".zone").textContent(), L.zone("Asia/Kolkata"));
  const s = await nextRunsAreLocal(page, id, "en");
  for (const iso of s.nextRuns) assert.strictEqual(new Date(iso).getUTCMinutes(), 45, "hourly at :15 in Kolkata: " + iso);
  const firstShown = await subRow(page, id).locator("td.next time").first().textContent();
  assert(/:45:00\s[AP]M$/.test(firstShown), "the next run is not shown in Berlin time: " + firstShown);
  log("created", id, "hourly at :15 Asia/Kolkata; next runs in local time:", firstShown);
  await pauseAndResume(page, id, L);
  await runNowAndSeeItsTask(page, id, "Hourly customers");
  await page.click("#view-subs");
  await subRow(page, id).waitFor({ timeout: STEP_TIMEOUT });
  return id;
}

async function noSidewaysScroll(page) {
  for (const width of [1366, 390]) {
    await page.setViewportSize({ width, height: width > 400 ? 768 : 844 });
    await page.waitForTimeout(200);
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
    assert(overflow <= 0, `the subscriptions view scrolls sideways by ${overflow}px at ${width}px`);
  }
  await shot(page, "sub-03-narrow");
  await page.setViewportSize({ width: 1366, height: 900 });
  log("no sideways scroll at 1366 and 390 px");
}

// The operators' console: tenant 1's operator finds alice's subscription,
// pauses and resumes it.
async function theConsolePausesAndResumes(context, id) {
  const page = await context.newPage();
  await page.setViewportSize({ width: 1366, height: 900 });
  page.on("pageerror", (e) => log("page error:", e.message));
  await page.goto(cfg.base + "/#token=" + cfg.op1Token);
  await page.locator("#view-toggle").waitFor({ state: "visible", timeout: STEP_TIMEOUT });
  await page.click("#view-toggle");
  const row = page.locator(`#op-sub-rows tr[data-id="${id}"]`);
  await row.waitFor({ timeout: STEP_TIMEOUT });
  assert.strictEqual(await row.getAttribute("data-state"), "ACTIVE");
  assert.strictEqual(await row.locator("td.user").textContent(), "alice");
  assert.strictEqual(await row.locator("td.tenant").textContent(), "1");
  await row.locator('[data-action="pause"]').click();
  await page.locator(`#op-sub-rows tr[data-id="${id}"][data-state="PAUSED"]`).waitFor({ timeout: STEP_TIMEOUT });
  assert.strictEqual((await api("GET", "/subscriptions/" + id, cfg.aliceToken)).state, "PAUSED");
  // Only the paused ones.
  await page.selectOption("#op-sub-state", "PAUSED");
  await page.click("#op-sub-search button[type=submit]");
  await page.waitForFunction((want) => {
    const rows = [...document.querySelectorAll("#op-sub-rows tr")];
    return rows.length > 0 && rows.every((r) => r.dataset.state === "PAUSED") && rows.some((r) => r.dataset.id === want);
  }, id, { timeout: STEP_TIMEOUT });
  await shot(page, "sub-04-console-paused");
  await page.locator(`#op-sub-rows tr[data-id="${id}"] [data-action="resume"]`).click();
  await page.locator(`#op-sub-rows tr[data-id="${id}"][data-state="ACTIVE"]`).waitFor({ timeout: STEP_TIMEOUT });
  assert.strictEqual((await api("GET", "/subscriptions/" + id, cfg.aliceToken)).state, "ACTIVE");
  await page.close();
  log("the console paused and resumed", id);
}

// subscriptions.enabled: false (cfg.subscriptionsOff): the routes answer 404
// and the page offers neither the view nor a "subscribe" button; the console
// has no subscriptions section.
async function offeredNothingWhenOff(context) {
  const page = await context.newPage();
  page.on("pageerror", (e) => log("page error:", e.message));
  const probed = page.waitForResponse((r) => new URL(r.url()).pathname.endsWith("/subscriptions"), { timeout: STEP_TIMEOUT });
  await page.goto(cfg.base + "/#token=" + cfg.aliceToken);
  assert.strictEqual((await (await probed).json()).code, "404");
  await page.waitForFunction(() => document.body.dataset.subscriptions === "off", null, { timeout: STEP_TIMEOUT });
  assert(await page.locator("#views").isHidden(), "the views are offered");
  assert(await page.locator("#create-subscribe").isHidden(), "subscribe is offered on the form");
  await page.locator("#rows tr[data-id]").first().waitFor({ timeout: STEP_TIMEOUT });
  assert(await page.locator('#rows [data-action="subscribe"]').first().isHidden(), "subscribe is offered on a task");
  await page.close();
  const op = await context.newPage();
  await op.goto(cfg.base + "/#token=" + cfg.op1Token);
  await op.locator("#view-toggle").waitFor({ state: "visible", timeout: STEP_TIMEOUT });
  await op.click("#view-toggle");
  await op.locator("#op-subs").waitFor({ state: "hidden", timeout: STEP_TIMEOUT });
  assert.strictEqual(await op.locator("#op-msg").textContent(), "", "the console reports an error");
  await op.close();
  log("subscriptions off: no view, no subscribe buttons, no console section");
}

(async () => {
  const context = await launch({ timezoneId: LOCAL_ZONE });
  if (cfg.subscriptionsOff) {
    try {
      await offeredNothingWhenOff(context);
      console.log("all checks passed");
    } catch (e) {
      console.error(e);
      process.exitCode = 1;
    } finally {
      await context.close();
    }
    return;
  }
  let page = null;
  try {
    page = await context.newPage();
    await page.setViewportSize({ width: 1366, height: 900 });
    page.on("pageerror", (e) => log("page error:", e.message));
    await page.goto(cfg.base + "/#token=" + cfg.aliceToken);
    await page.locator("#app").waitFor({ state: "visible" });
    await page.waitForFunction(() => document.body.dataset.live === "sse", null, { timeout: STEP_TIMEOUT });
    await page.locator("#create-type option").first().waitFor({ state: "attached", timeout: STEP_TIMEOUT });
    assert.strictEqual(await page.locator("html").getAttribute("lang"), "zh-CN");
    await theChineseLifecycle(page);
    const id = await theEnglishLifecycle(page);
    await noSidewaysScroll(page);
    await theConsolePausesAndResumes(context, id);
    console.log("all checks passed");
  } catch (e) {
    if (page) await shot(page, "sub-failure").catch(() => {});
    console.error(e);
    process.exitCode = 1;
  } finally {
    await context.close();
  }
})();
