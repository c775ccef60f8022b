// The download center (docs/download-center.md): sign-in from "#token=", the
// task list with tabs, search, type filter and pages, live updates over
// Server-Sent Events (polling when the stream is down), the create form built
// from GET /export-types, and preview.
//
// Task names and messages are user input: they are only ever assigned as
// textContent, never as HTML.
"use strict";

(() => {
  const API = document.body.dataset.api;
  const TOKEN_KEY = "exportCenter.token";
  const LANG_KEY = "exportCenter.lang";
  const PAGE_SIZE = 20;
  const POLL_MS = 5000;
  const SSE_RETRY_MS = 30000;

  // ---- texts ---------------------------------------------------------------

  const TEXT = {
    "zh-CN": {
      skip: "跳到任务列表", title: "下载中心", signOut: "退出",
      signInTitle: "登录", signInHelp: "请从业务平台打开本页面；开发时可在下方粘贴令牌。",
      devToken: "开发令牌 (JWT)", useToken: "使用令牌",
      createTitle: "新建导出", exportType: "导出类型", taskName: "任务名称", format: "文件格式",
      submit: "提交导出", preview: "预览 / Preview", tasksTitle: "我的导出",
      search: "按名称搜索", typeFilter: "类型", allTypes: "全部类型",
      colName: "名称", colType: "类型", colStatus: "状态", colProgress: "进度",
      colSize: "大小", colTimes: "时间", colDownloads: "下载次数", colActions: "操作",
      sheets: "{n} 个工作表：{rows} 行", files: "{n} 个文件：{rows} 行",
      empty: "没有符合条件的任务", prev: "上一页", next: "下一页",
      pageInfo: "第 {page} / {pages} 页，共 {total} 个任务", pageInfoMore: "第 {page} 页，共 {total}+ 个任务",
      live: "● 实时更新", polling: "○ 实时连接中断，每 5 秒刷新",
      tab_all: "全部", tab_queued: "排队中", tab_running: "运行中", tab_retrying: "等待重试",
      tab_succeeded: "已完成", tab_failed: "失败", tab_cancelled: "已取消", tab_expired: "已过期",
      help_all: "", help_queued: "已提交，等待开始。", help_running: "正在生成文件。",
      help_retrying: "上次尝试遇到临时问题，稍后会自动重试。",
      help_succeeded: "文件已生成，可在过期前下载。",
      help_failed: "导出未能完成。“数据已变更”表示导出的查询逻辑已升级，请重新导出；" +
        "“数据不一致”表示导出期间数据被修改、前后对不上，文件不可信，请重试。",
      help_cancelled: "已被取消。", help_expired: "文件已超过保留期被删除，可重新导出。",
      st_PENDING: "排队中", st_RETRYING: "等待重试", st_RUNNING: "运行中", st_SUCCEEDED: "已完成",
      st_FAILED: "失败", st_CANCELLED: "已取消", st_EXPIRED: "已过期",
      st_STALE: "数据已变更", st_INCONSISTENT: "数据不一致",
      why_STALE: "创建任务后导出的查询逻辑已升级，重试仍会失败，请重新导出。",
      why_INCONSISTENT: "导出期间数据被修改，前后不一致，结果不可信，请重试。",
      cancelling: "正在取消…", attempt: "第 {n}/{max} 次尝试",
      rows: "{n} 行", rowsOf: "{n} / {total} 行", eta: "预计还需 {d}",
      requested: "提交 {t}", finished: "完成 {t}", expiresIn: "{d}后过期", expiredAt: "已过期",
      download: "下载", retry: "重试", exportAgain: "重新导出", cancel: "取消",
      widerFile: "此文件是按申请人的权限生成的，其中的列（{columns}）超出了您的查看权限。可以重新导出一份按您的权限生成的文件。",
      exportedAgain: "已重新导出：{name}", created: "已创建：{name}", deduplicated: "相同的导出已在进行中：{name}",
      retried: "已重新提交：{name}", cancelRequested: "已请求取消：{name}",
      previewUnavailable: "预览不可用 / preview unavailable",
      previewCount: "共 {n} 行", previewCountApprox: "至少 {n} 行",
      previewRunning: "正在预览…", previewShown: "前 {n} 行，与文件中一致",
      previewTable: "预览：前几行数据",
      previewTooMany: "超过该导出类型的行数上限 {max} 行，提交后会失败。建议：{s}",
      suggest_CSV: "改用 CSV", suggest_SPLIT: "拆分为多个文件", suggest_FILTER: "缩小筛选范围",
      listHint: "多个值用逗号分隔", none: "（不限）", yes: "是", no: "否",
      badJson: "{name} 不是有效的 JSON", badInteger: "{name} 必须是整数",
      networkError: "网络错误，请稍后重试", sessionExpired: "登录已失效，请从平台重新打开本页面。",
      fail_RETRIES_EXHAUSTED: "多次重试后仍失败（数据源或存储暂时不可用）",
      fail_INVALID_DATA: "数据或参数无效", fail_PROVIDER_REJECTED: "业务系统拒绝了本次导出",
      fail_NOT_FOUND: "业务系统找不到该导出", fail_LIMIT_EXCEEDED: "超过行数或文件大小上限",
      fail_INTERNAL: "系统内部错误，请联系管理员", fail_CANCELLED: "已取消",
      fail_UNSAFE_TEMPLATE: "导出模板不安全，已拒绝执行",
      fail_COMMAND_QUARANTINED: "任务消息无法处理，已隔离", fail_TIMEOUT: "执行超时",
      fail_other: "导出失败",
      units: ["天", "小时", "分", "秒"],
      // the task's detail: its timeline, and what governance hid
      details: "详情", hideDetails: "收起详情", timelineTitle: "时间线", timelineEmpty: "还没有记录",
      timelineLoading: "正在读取时间线…", timelineCapped: "只保留最近的 {n} 条记录",
      masked: "{n} 列已脱敏", omitted: "{n} 列已省略",
      filePassword: "文件密码", filePasswordRule: "8–128 个字符，至少包含以下两类：小写字母、大写字母、数字、其他字符。密码不会被保存，请牢记；忘记后只能重新导出。",
      passwordRequired: "此导出必须设置文件密码", passwordLength: "文件密码须为 8–128 个字符",
      passwordClasses: "文件密码须至少包含两类字符：小写字母、大写字母、数字、其他字符",
      passwordControl: "文件密码不能包含控制字符", encrypted: "文件已加密（需密码打开）",
      newPasswordFor: "“{name}”的文件已加密，其密码不会保存。请为重新导出的文件设置新密码：",
      ev_CREATED: "已提交", ev_COMMAND_SENT: "已派发", ev_COMMAND_RESENT: "重新派发", ev_CLAIMED: "开始执行",
      ev_PROGRESS: "进度", ev_RETRY_SCHEDULED: "安排自动重试", ev_LEASE_RECOVERED: "执行实例失联，已回收",
      ev_CANCEL_REQUESTED: "请求取消", ev_QUARANTINED: "已隔离", ev_FINISHED: "结束", ev_MANUAL_RETRY: "手动重试",
      ev_DOWNLOADED: "已下载", ev_EXPIRED: "已过期",
      evk_by: "操作人", evk_user: "用户", evk_instance: "实例", evk_attempt: "尝试", evk_rows: "行数",
      evk_total: "总行数", evk_bytes: "大小", evk_durationMs: "耗时", evk_nextAt: "下次尝试", evk_cause: "原因",
      evk_status: "状态", evk_code: "代码", evk_message: "信息", evk_from: "原状态", evk_outcome: "结果",
      evk_state: "当时状态", evk_reason: "原因", evk_sends: "发送次数", evk_lastError: "上次错误",
      evk_eventId: "消息", evk_detail: "详细原因", evk_via: "方式", evk_nextVersion: "下一版本", evk_delayMs: "延迟",
      // the operators' console
      opOpen: "运维控制台", opClose: "返回我的导出", opSearchTitle: "任务查询", opTenant: "租户",
      opUser: "用户", opFailureCode: "失败代码", opFrom: "提交时间从", opTo: "到", opSearch: "查询",
      opAnyStatus: "全部状态", opBulkRetry: "批量重试", opBulkCancel: "批量取消", opConfirm: "确认",
      opBack: "返回", opColId: "任务", opLeaseOwner: "执行实例", opTotal: "共 {n} 个任务",
      opConfirmRETRY: "将重试符合条件的 {n} 个任务，确认吗？",
      opConfirmCANCEL: "将取消符合条件的 {n} 个任务，确认吗？",
      opNothing: "没有符合条件、可以执行该操作的任务。",
      opBulkDone: "{action}：匹配 {matched}，成功 {succeeded}，跳过 {skipped}，失败 {failed}",
      act_RETRY: "批量重试", act_CANCEL: "批量取消", act_REDELIVER: "重新投递",
      opDetailTitle: "任务详情", opCommands: "调度命令（发件箱）", opNotifications: "通知投递",
      opTimeline: "时间线",
      opDispatchVersion: "调度版本", opLeaseUntil: "租约到期", opAttempts: "尝试次数",
      opHeartbeat: "最近心跳", opOutboxState: "发件箱状态", opNone: "无",
      opFailureDetail: "失败详情（仅运维可见）",
      opAuditTitle: "批量操作记录", opWho: "操作人", opAction: "操作", opFilter: "条件",
      opMatched: "匹配", opOutcome: "结果", opStarted: "开始时间",
      opStatsTitle: "按导出类型统计", win_24h: "最近 24 小时", win_7d: "最近 7 天",
      opCount: "任务数", opSuccessRate: "成功率", opWait: "等待 p50 / p95", opDuration: "耗时 p50 / p95",
      opRowsPerSecond: "行/秒", opBytes: "数据量", opTopFailures: "主要失败代码", opNoStats: "该时段没有任务",
      opHealthTitle: "队列健康", opDueCommands: "待发送命令", opOldestDue: "最早待发送已等待",
      opDeadCount: "投递失败的通知", opRunning: "各实例运行中", opInstance: "实例", opDead: "投递失败的通知",
      opReceiver: "接收方", opLastError: "最后错误", opRedeliver: "重新投递", opRedelivered: "已重新投递通知 {id}",
      opNoDead: "没有投递失败的通知", opNoRunning: "没有运行中的任务",
    },
    en: {
      skip: "Skip to the task list", title: "Download center", signOut: "Sign out",
      signInTitle: "Sign in", signInHelp: "Open this page from the platform; for development, paste a token below.",
      devToken: "Development token (JWT)", useToken: "Use token",
      createTitle: "New export", exportType: "Export type", taskName: "Task name", format: "File format",
      submit: "Start export", preview: "预览 / Preview", tasksTitle: "My exports",
      search: "Search by name", typeFilter: "Type", allTypes: "All types",
      colName: "Name", colType: "Type", colStatus: "Status", colProgress: "Progress",
      colSize: "Size", colTimes: "Times", colDownloads: "Downloads", colActions: "Actions",
      sheets: "{n} sheets: {rows} rows", files: "{n} files: {rows} rows",
      empty: "No tasks match", prev: "Previous", next: "Next",
      pageInfo: "Page {page} of {pages}, {total} tasks", pageInfoMore: "Page {page}, {total}+ tasks",
      live: "● Live", polling: "○ Live updates down; refreshing every 5 s",
      tab_all: "All", tab_queued: "Queued", tab_running: "Running", tab_retrying: "Retrying",
      tab_succeeded: "Succeeded", tab_failed: "Failed", tab_cancelled: "Cancelled", tab_expired: "Expired",
      help_all: "", help_queued: "Submitted, waiting to start.", help_running: "The file is being written.",
      help_retrying: "The last attempt hit a temporary problem; it will be retried automatically.",
      help_succeeded: "The file is ready to download until it expires.",
      help_failed: "The export did not finish. \"Data changed\" means the export's query logic was upgraded: " +
        "export again. \"Data inconsistent\" means the data was modified while it was read, so the file " +
        "cannot be trusted: retry.",
      help_cancelled: "Cancelled.", help_expired: "The file passed its retention time and was deleted; export again.",
      st_PENDING: "Queued", st_RETRYING: "Retrying", st_RUNNING: "Running", st_SUCCEEDED: "Succeeded",
      st_FAILED: "Failed", st_CANCELLED: "Cancelled", st_EXPIRED: "Expired",
      st_STALE: "Data changed", st_INCONSISTENT: "Data inconsistent",
      why_STALE: "The export's query logic was upgraded after the task was created; a retry would fail again. Export again.",
      why_INCONSISTENT: "The data was modified while it was exported; the result cannot be trusted. Retry.",
      cancelling: "Cancelling…", attempt: "attempt {n} of {max}",
      rows: "{n} rows", rowsOf: "{n} of {total} rows", eta: "about {d} left",
      requested: "Requested {t}", finished: "Finished {t}", expiresIn: "expires in {d}", expiredAt: "expired",
      download: "Download", retry: "Retry", exportAgain: "Export again", cancel: "Cancel",
      widerFile: "This file was made for its requester and shows columns you may not see as it does ({columns}). " +
        "Export again to get a file made for your permissions.",
      exportedAgain: "Exported again: {name}", created: "Created: {name}", deduplicated: "The same export is already running: {name}",
      retried: "Submitted again: {name}", cancelRequested: "Cancel requested: {name}",
      previewUnavailable: "预览不可用 / preview unavailable",
      previewCount: "{n} rows", previewCountApprox: "at least {n} rows",
      previewRunning: "Previewing…", previewShown: "the first {n} rows, as in the file",
      previewTable: "Preview: the first rows",
      previewTooMany: "More than the {max} rows this export type allows; the export would fail. Suggestions: {s}",
      suggest_CSV: "use CSV", suggest_SPLIT: "split into several files", suggest_FILTER: "narrow the filter",
      listHint: "separate values with commas", none: "(any)", yes: "yes", no: "no",
      badJson: "{name} is not valid JSON", badInteger: "{name} must be a whole number",
      networkError: "Network error; try again shortly", sessionExpired: "Your session has ended; open this page from the platform again.",
      fail_RETRIES_EXHAUSTED: "Still failing after several retries (data source or storage unavailable)",
      fail_INVALID_DATA: "Invalid data or parameters", fail_PROVIDER_REJECTED: "The business system refused this export",
      fail_NOT_FOUND: "The business system does not know this export", fail_LIMIT_EXCEEDED: "Too many rows or too large a file",
      fail_INTERNAL: "Internal error; contact support", fail_CANCELLED: "Cancelled",
      fail_UNSAFE_TEMPLATE: "The export template is unsafe and was refused",
      fail_COMMAND_QUARANTINED: "The task's message could not be processed and was set aside", fail_TIMEOUT: "Timed out",
      fail_other: "Export failed",
      units: ["d", "h", "min", "s"],
      // the task's detail: its timeline, and what governance hid
      details: "Details", hideDetails: "Hide details", timelineTitle: "Timeline", timelineEmpty: "Nothing recorded yet",
      timelineLoading: "Reading the timeline…", timelineCapped: "Only the latest {n} events are kept",
      masked: "{n} columns masked", omitted: "{n} columns omitted",
      filePassword: "File password", filePasswordRule: "8–128 characters mixing at least two of: lower-case, upper-case, digits, other characters. The password is not kept: remember it; a lost password means exporting again.",
      passwordRequired: "This export requires a file password", passwordLength: "The file password must be 8–128 characters",
      passwordClasses: "The file password must mix at least two of: lower-case, upper-case, digits, other characters",
      passwordControl: "The file password must not contain control characters", encrypted: "Password-protected file",
      newPasswordFor: "The file of \u201c{name}\u201d was password-protected and its password is not kept. Set a new password for the new file:",
      ev_CREATED: "Created", ev_COMMAND_SENT: "Command sent", ev_COMMAND_RESENT: "Command re-sent", ev_CLAIMED: "Started",
      ev_PROGRESS: "Progress", ev_RETRY_SCHEDULED: "Retry scheduled", ev_LEASE_RECOVERED: "Lease recovered",
      ev_CANCEL_REQUESTED: "Cancel requested", ev_QUARANTINED: "Quarantined", ev_FINISHED: "Finished",
      ev_MANUAL_RETRY: "Manual retry", ev_DOWNLOADED: "Downloaded", ev_EXPIRED: "Expired",
      evk_by: "by", evk_user: "user", evk_instance: "instance", evk_attempt: "attempt", evk_rows: "rows",
      evk_total: "total", evk_bytes: "size", evk_durationMs: "took", evk_nextAt: "next try", evk_cause: "cause",
      evk_status: "status", evk_code: "code", evk_message: "message", evk_from: "from", evk_outcome: "outcome",
      evk_state: "state", evk_reason: "reason", evk_sends: "sends", evk_lastError: "last error",
      evk_eventId: "message", evk_detail: "detail", evk_via: "via", evk_nextVersion: "next version", evk_delayMs: "delay",
      // the operators' console
      opOpen: "Operators' console", opClose: "Back to my exports", opSearchTitle: "Find tasks", opTenant: "Tenant",
      opUser: "User", opFailureCode: "Failure code", opFrom: "Requested from", opTo: "to", opSearch: "Search",
      opAnyStatus: "Any status", opBulkRetry: "Retry all matching", opBulkCancel: "Cancel all matching", opConfirm: "Confirm",
      opBack: "Back", opColId: "Task", opLeaseOwner: "Instance", opTotal: "{n} tasks",
      opConfirmRETRY: "{n} matching tasks will be retried. Confirm?",
      opConfirmCANCEL: "{n} matching tasks will be cancelled. Confirm?",
      opNothing: "No matching task this action applies to.",
      opBulkDone: "{action}: {matched} matched, {succeeded} done, {skipped} skipped, {failed} failed",
      act_RETRY: "Bulk retry", act_CANCEL: "Bulk cancel", act_REDELIVER: "Re-delivery",
      opDetailTitle: "Task detail", opCommands: "Dispatch commands (outbox)", opNotifications: "Notifications",
      opTimeline: "Timeline",
      opDispatchVersion: "Dispatch version", opLeaseUntil: "Lease until", opAttempts: "Attempts",
      opHeartbeat: "Last heartbeat", opOutboxState: "Outbox state", opNone: "none",
      opFailureDetail: "Failure detail (operators only)",
      opAuditTitle: "Bulk actions", opWho: "Who", opAction: "Action", opFilter: "Filter",
      opMatched: "Matched", opOutcome: "Outcome", opStarted: "Started",
      opStatsTitle: "By export type", win_24h: "Last 24 hours", win_7d: "Last 7 days",
      opCount: "Tasks", opSuccessRate: "Success rate", opWait: "Wait p50 / p95", opDuration: "Duration p50 / p95",
      opRowsPerSecond: "Rows/s", opBytes: "Bytes", opTopFailures: "Top failure codes", opNoStats: "No tasks in this window",
      opHealthTitle: "Queue health", opDueCommands: "Commands due", opOldestDue: "Oldest due for",
      opDeadCount: "Dead webhook deliveries", opRunning: "Running per instance", opInstance: "Instance", opDead: "Dead webhook deliveries",
      opReceiver: "Receiver", opLastError: "Last error", opRedeliver: "Re-deliver", opRedelivered: "Notification {id} queued for delivery again",
      opNoDead: "No dead deliveries", opNoRunning: "Nothing running",
    },
  };

  let lang = localStorage.getItem(LANG_KEY) === "en" ? "en" : "zh-CN";

  function t(key, vars) {
    let text = TEXT[lang][key];
    if (text === undefined) text = TEXT.en[key] !== undefined ? TEXT.en[key] : key;
    for (const [k, v] of Object.entries(vars || {})) text = text.split("{" + k + "}").join(String(v));
    return text;
  }

  // ---- small helpers -------------------------------------------------------

  const $ = (id) => document.getElementById(id);

  function el(tag, attrs, ...children) {
    const node = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (v === undefined || v === null || v === false) continue;
      if (k === "text") node.textContent = v;
      else if (k === "class") node.className = v;
      else if (k.startsWith("on")) node.addEventListener(k.slice(2), v);
      else node.setAttribute(k, v === true ? "" : v);
    }
    for (const c of children) if (c !== null && c !== undefined) node.append(c);
    return node;
  }

  function formatNumber(n) {
    return Number(n).toLocaleString(lang);
  }

  function formatSize(bytes) {
    if (bytes === null || bytes === undefined) return "";
    let n = Number(bytes);
    const units = ["B", "KB", "MB", "GB", "TB"];
    let i = 0;
    while (n >= 1024 && i < units.length - 1) { n /= 1024; i++; }
    return (i === 0 ? n : n.toFixed(n < 10 ? 1 : 0)) + " " + units[i];
  }

  // Two largest units: "2天3小时", "5 min 10 s".
  function formatDuration(ms) {
    let s = Math.max(0, Math.round(ms / 1000));
    const parts = [Math.floor(s / 86400), Math.floor(s / 3600) % 24, Math.floor(s / 60) % 60, s % 60];
    const units = TEXT[lang].units;
    const shown = [];
    for (let i = 0; i < parts.length && shown.length < 2; i++) {
      if (parts[i] > 0 || (shown.length === 0 && i === parts.length - 1)) {
        shown.push(lang === "en" ? parts[i] + " " + units[i] : parts[i] + units[i]);
      } else if (shown.length > 0) break;
    }
    return shown.join(lang === "en" ? " " : "");
  }

  // The browser's local time zone, in the page's language.
  function formatTime(iso) {
    if (!iso) return "";
    return new Date(iso).toLocaleString(lang, {
      year: "numeric", month: "2-digit", day: "2-digit",
      hour: "2-digit", minute: "2-digit", second: "2-digit",
    });
  }

  function say(text, kind) {
    const msg = $("msg");
    msg.textContent = text || "";
    msg.className = "msg" + (kind ? " " + kind : "");
  }

  // ---- sign-in -------------------------------------------------------------

  // The shell opens "/#token=<JWT>": keep it for this tab only and take it
  // out of the address bar (and history) at once.
  function takeTokenFromHash() {
    const match = /(?:^#|&)token=([^&]*)/.exec(location.hash);
    if (!match) return;
    sessionStorage.setItem(TOKEN_KEY, decodeURIComponent(match[1]));
    history.replaceState(null, "", location.pathname + location.search);
  }

  function token() {
    return sessionStorage.getItem(TOKEN_KEY) || "";
  }

  function signOut(message) {
    sessionStorage.removeItem(TOKEN_KEY);
    stopLive();
    showSignIn(message);
  }

  function showSignIn(message) {
    $("app").hidden = true;
    $("console").hidden = true;
    $("view-toggle").hidden = true;
    op.shown = false;
    $("signout").hidden = true;
    $("signin").hidden = false;
    $("live").textContent = "";
    if (message) {
      const help = $("signin").querySelector("p");
      help.textContent = message;
    }
  }

  // ---- API -----------------------------------------------------------------

  class ApiError extends Error {
    constructor(code, message, data) {
      super(message);
      this.code = code;
      this.data = data || null;
    }
  }

  async function call(method, path, body) {
    const headers = { Authorization: "Bearer " + token() };
    if (body !== undefined) headers["Content-Type"] = "application/json";
    let res;
    try {
      res = await fetch(API + path, {
        method, headers, body: body === undefined ? undefined : JSON.stringify(body),
      });
    } catch (e) {
      throw new ApiError("network", t("networkError"));
    }
    let envelope = null;
    try { envelope = await res.json(); } catch (e) { envelope = null; }
    if (!envelope) throw new ApiError(String(res.status), t("networkError"));
    if (envelope.code !== "200") {
      if (envelope.code === "401") signOut(t("sessionExpired"));
      throw new ApiError(envelope.code, envelope.message, envelope.data);
    }
    return envelope.data;
  }

  // ---- state ---------------------------------------------------------------

  const TABS = {
    all: "", queued: "QUEUED", running: "RUNNING", retrying: "RETRYING", succeeded: "SUCCEEDED",
    failed: "FAILED,STALE,INCONSISTENT", cancelled: "CANCELLED", expired: "EXPIRED",
  };
  const state = {
    tab: "all", name: "", type: "", page: 1, total: 0, totalIsExact: true,
    // Pages by key (docs/http-api.md#paging): `after` is the cursor of the
    // page shown (null on the first), `back` the cursors of the pages before
    // it, `nextCursor` the one the answer gave for the page after it.
    after: null, back: [], nextCursor: null,
    types: new Map(),  // exportType → definition
    rows: new Map(),   // task id → { task, tr }
    created: null,     // the task created last, shown above the list
    detailFor: null,   // the task whose detail (its timeline) is open
  };

  // The tab a task belongs to (queued and retrying are both PENDING).
  function phaseOf(task) {
    if (task.status === "PENDING") return task.attemptCount > 0 ? "retrying" : "queued";
    if (task.status === "STALE" || task.status === "INCONSISTENT") return "failed";
    return task.status.toLowerCase();
  }

  function statusKey(task) {
    return phaseOf(task) === "retrying" ? "RETRYING" : task.status;
  }

  function matchesFilters(task) {
    if (state.tab !== "all" && phaseOf(task) !== state.tab) return false;
    if (state.type && task.exportType !== state.type) return false;
    if (state.name && !task.taskName.toLowerCase().includes(state.name.toLowerCase())) return false;
    return true;
  }

  // ---- the task list -------------------------------------------------------

  let loadSeq = 0;
  async function loadTasks() {
    const seq = ++loadSeq;
    const q = new URLSearchParams({ size: String(PAGE_SIZE) });
    if (state.after) q.set("after", state.after);
    if (TABS[state.tab]) q.set("status", TABS[state.tab]);
    if (state.type) q.set("exportType", state.type);
    if (state.name) q.set("name", state.name);
    try {
      const data = await call("GET", "/export-tasks?" + q);
      if (seq !== loadSeq) return;  // a newer load is on its way
      state.total = Number(data.total);
      state.totalIsExact = data.totalIsExact !== false;
      state.nextCursor = data.nextCursor || null;
      renderRows(data.records);
    } catch (e) {
      if (seq === loadSeq) say(e.message, "error");
    }
  }

  let reloadTimer = null;
  function scheduleReload() {
    clearTimeout(reloadTimer);
    reloadTimer = setTimeout(loadTasks, 300);
  }

  function renderRows(tasks) {
    const body = $("rows");
    body.replaceChildren();
    state.rows.clear();
    for (const task of tasks) {
      const tr = buildRow(task);
      state.rows.set(task.id, { task, tr });
      body.append(tr);
    }
    $("empty").hidden = tasks.length > 0;
    if (state.detailFor && taskRow(state.detailFor)) showTaskDetail(state.detailFor);
    // The created task's events may have passed before create answered: the
    // list's copy is the newer one.
    const fresh = state.created && tasks.find((task) => task.id === state.created.id);
    if (fresh && fresh !== state.created) {
      state.created = fresh;
      renderCreated();
    }
    const pages = Math.max(1, Math.ceil(state.total / PAGE_SIZE));
    $("page-info").textContent = state.totalIsExact
      ? t("pageInfo", { page: state.page, pages, total: formatNumber(state.total) })
      : t("pageInfoMore", { page: state.page, total: formatNumber(state.total) });
    $("prev").disabled = state.page <= 1;
    $("next").disabled = !state.nextCursor;
  }

  function typeTitle(type) {
    const def = state.types.get(type);
    return def && def.title ? def.title : type;
  }

  function failureText(task) {
    if (task.status === "STALE" || task.status === "INCONSISTENT") return t("why_" + task.status);
    if (task.status !== "FAILED") return "";
    const key = "fail_" + (task.failureCode || "other");
    const reason = TEXT[lang][key] ? t(key) : t("fail_other");
    return task.failureMessage ? reason + "：" + task.failureMessage : reason;
  }

  function progressCell(task) {
    const cell = el("td", { "data-label": t("colProgress"), class: "progress" });
    const processed = Number(task.processedRows || 0);
    const total = task.totalRows === null || task.totalRows === undefined ? null : Number(task.totalRows);
    if (task.progress !== null && task.progress !== undefined) {
      cell.append(el("progress", { max: "100", value: String(task.progress), "aria-label": task.taskName }),
        el("span", { class: "pct", text: " " + task.progress + "%" }));
    }
    if (task.status === "RUNNING" || processed > 0) {
      cell.append(el("div", {
        class: "rows",
        text: total !== null ? t("rowsOf", { n: formatNumber(processed), total: formatNumber(total) })
                             : t("rows", { n: formatNumber(processed) }),
      }));
    }
    const eta = etaOf(task);
    if (eta !== null) cell.append(el("div", { class: "eta", "data-eta": "1", text: t("eta", { d: formatDuration(eta) }) }));
    return cell;
  }

  // Remaining time from the average rate since the attempt started.
  function etaOf(task) {
    if (task.status !== "RUNNING" || !task.startedAt || task.totalRows === null) return null;
    const processed = Number(task.processedRows), total = Number(task.totalRows);
    const elapsed = Date.now() - new Date(task.startedAt).getTime();
    if (!(processed > 0) || !(total > processed) || elapsed <= 0) return null;
    return (total - processed) * elapsed / processed;
  }

  function timesCell(task) {
    const cell = el("td", { "data-label": t("colTimes"), class: "times" });
    cell.append(el("div", { text: t("requested", { t: formatTime(task.requestedAt) }) }));
    if (task.completedAt) cell.append(el("div", { text: t("finished", { t: formatTime(task.completedAt) }) }));
    if (task.status === "SUCCEEDED" && task.expiresAt) {
      cell.append(el("div", { class: "expiry", "data-expires": task.expiresAt, text: expiryText(task.expiresAt) }));
    }
    return cell;
  }

  function expiryText(iso) {
    const left = new Date(iso).getTime() - Date.now();
    return left > 0 ? t("expiresIn", { d: formatDuration(left) }) : t("expiredAt");
  }

  function buildRow(task) {
    const key = statusKey(task);
    const status = el("td", { "data-label": t("colStatus"), class: "status" },
      el("span", { class: "badge st-" + key.toLowerCase(), text: t("st_" + key) }));
    if (task.cancelRequested && (task.status === "RUNNING" || task.status === "PENDING")) {
      status.append(el("div", { class: "note", text: t("cancelling") }));
    }
    if (key === "RETRYING") {
      status.append(el("div", { class: "note", text: t("attempt", { n: task.attemptCount + 1, max: task.maxAttempts }) }));
    }
    const why = failureText(task);
    if (why) status.append(el("div", { class: "why", text: why }));
    const tr = el("tr", { "data-id": task.id, "data-status": task.status },
      el("td", { "data-label": t("colName"), class: "name" },
        el("span", { text: task.taskName }), el("span", { class: "fmt", text: task.format }),
        lockMark(task), governedNote(task.columnPolicy)),
      el("td", { "data-label": t("colType"), text: typeTitle(task.exportType) }),
      status,
      progressCell(task),
      sizeCell(task),
      timesCell(task),
      el("td", { "data-label": t("colDownloads"), class: "downloads", text: formatNumber(task.downloadCount || 0) }),
      actionsCell(task));
    return tr;
  }

  // The size, and for a finished file its manifest: rows per sheet or part and
  // the SHA-256 (shortened; the whole value is the title and is selectable).
  function sizeCell(task) {
    const cell = el("td", { "data-label": t("colSize"), class: "size" },
      el("span", { text: formatSize(task.sizeBytes) }));
    const m = task.manifest;
    if (!m) return cell;
    if (m.parts.length > 1) {
      const rows = m.parts.map((p) => formatNumber(p.rows)).join(" + ");
      cell.append(el("div", { class: "note parts",
        text: t(m.parts[0].kind === "SHEET" ? "sheets" : "files", { n: m.parts.length, rows: rows }) }));
    }
    cell.append(el("div", { class: "note sha", title: "SHA-256 " + m.sha256, "data-sha256": m.sha256,
      text: "SHA-256 " + m.sha256.slice(0, 8) + "…" }));
    return cell;
  }

  // A password-protected file: a lock, never how it is protected
  // (docs/configuration.md#password-protected-files-file-password).
  function lockMark(task) {
    if (!task.encrypted) return null;
    return el("span", { class: "lock", "data-encrypted": "1", role: "img", title: t("encrypted"),
      "aria-label": t("encrypted"), text: "\u{1F512}" });
  }

  // "2 columns masked · 1 column omitted": what the requester may not see,
  // decided when the task was created (docs/configuration.md#column-governance-columns).
  function governedNote(policy) {
    if (!policy || (!policy.masked && !policy.omitted)) return null;
    const parts = [];
    if (policy.masked) parts.push(t("masked", { n: policy.masked }));
    if (policy.omitted) parts.push(t("omitted", { n: policy.omitted }));
    return el("div", { class: "note governed", "data-masked": String(policy.masked || 0),
      "data-omitted": String(policy.omitted || 0), text: parts.join(" · ") });
  }

  function actionsCell(task) {
    const cell = el("td", { "data-label": t("colActions"), class: "actions" });
    const button = (label, action) => el("button", {
      type: "button", "data-action": action, "aria-label": t(label) + " " + task.taskName,
      text: t(label), onclick: () => act(action, task),
    });
    if (task.status === "SUCCEEDED") cell.append(button("download", "download"));
    // A password-protected file's key is erased when the task ends: it is
    // exported again with a new password, never retried.
    const retryable = ["FAILED", "CANCELLED", "INCONSISTENT"].includes(task.status);
    if (retryable && !task.encrypted) cell.append(button("retry", "retry"));
    // A retry keeps the contract version the task recorded and would end STALE
    // again: a new task with the same parameters is the way out.
    if (task.status === "STALE" || (retryable && task.encrypted)) cell.append(button("exportAgain", "export-again"));
    if ((task.status === "PENDING" || task.status === "RUNNING") && !task.cancelRequested) {
      cell.append(button("cancel", "cancel"));
    }
    const open = state.detailFor === task.id;
    cell.append(el("button", {
      type: "button", class: "link", "data-action": "details", "aria-expanded": open ? "true" : "false",
      "aria-controls": "detail-" + task.id, text: t(open ? "hideDetails" : "details"),
      onclick: () => toggleTaskDetail(task.id),
    }));
    return cell;
  }

  // ---- a task's detail: its timeline ----
  // (docs/task-lifecycle.md#the-timeline) One detail open at a time, as a row
  // under the task's; read again whenever the task changes while it is open.

  function taskDetailRow() {
    return document.querySelector("tr.detail");
  }

  // The task's row in the list, else the created task's above it.
  function taskRow(id) {
    return document.querySelector('#rows tr[data-id="' + id + '"]') ||
      document.querySelector('#created tr[data-id="' + id + '"]');
  }

  function toggleTaskDetail(id) {
    const open = state.detailFor === id;
    state.detailFor = open ? null : id;
    const old = taskDetailRow();
    if (old) old.remove();
    for (const button of document.querySelectorAll('[data-action="details"]')) {
      const now = state.detailFor === button.closest("tr").dataset.id;
      button.setAttribute("aria-expanded", now ? "true" : "false");
      button.textContent = t(now ? "hideDetails" : "details");
    }
    if (!open) showTaskDetail(id);
  }

  function placeTaskDetail(id, ...content) {
    const anchor = taskRow(id);
    if (!anchor || state.detailFor !== id) return;
    const old = taskDetailRow();
    const tr = el("tr", { class: "detail", id: "detail-" + id, "data-detail-for": id },
      el("td", { colspan: "8" }, el("h3", { text: t("timelineTitle") }), ...content));
    if (old && old.previousElementSibling === anchor) old.replaceWith(tr);
    else {
      if (old) old.remove();
      anchor.after(tr);
    }
  }

  async function showTaskDetail(id) {
    if (!taskDetailRow()) placeTaskDetail(id, el("p", { class: "help", text: t("timelineLoading") }));
    try {
      const data = await call("GET", "/export-tasks/" + id + "/timeline");
      placeTaskDetail(id, timelineList(data.events, data.limit));
    } catch (e) {
      placeTaskDetail(id, el("p", { class: "why", text: e.message || t("networkError") }));
    }
  }

  // The events oldest first, each in the browser's time zone and the page's
  // language; unknown kinds and keys show as the server names them.
  function timelineList(events, limit) {
    if (!events || events.length === 0) return el("p", { class: "help", text: t("timelineEmpty") });
    const list = el("ol", { class: "timeline" }, ...events.map((e) => el("li", { "data-kind": e.kind, "data-id": e.id },
      el("time", { datetime: e.at, text: formatTime(e.at) }),
      el("span", { class: "kind", text: TEXT[lang]["ev_" + e.kind] ? t("ev_" + e.kind) : e.kind }),
      eventFacts(e.details || {}))));
    if (limit && events.length >= limit) {
      return el("div", {}, list, el("p", { class: "note", text: t("timelineCapped", { n: limit }) }));
    }
    return list;
  }

  function eventFacts(details) {
    const parts = Object.entries(details).map(([k, v]) => {
      const label = TEXT[lang]["evk_" + k] ? t("evk_" + k) : k;
      return label + " " + factValue(k, v);
    });
    return parts.length ? el("span", { class: "facts-text", text: parts.join(" · ") }) : null;
  }

  function factValue(key, v) {
    if (v === null || v === undefined) return "";
    if (key === "rows" || key === "total") return formatNumber(v);
    if (key === "bytes") return formatSize(v);
    if (key === "durationMs" || key === "delayMs") return formatDuration(Number(v));
    if (key === "nextAt") return formatTime(v);
    if (key === "status" || key === "from" || key === "state") return TEXT[lang]["st_" + v] ? t("st_" + v) : String(v);
    return String(v);
  }

  async function act(action, task) {
    try {
      if (action === "download") {
        // A short-lived signed link: the browser downloads straight from it,
        // however large the file, without holding it in memory.
        const link = await call("POST", "/export-tasks/" + task.id + "/download-url");
        const a = el("a", { href: link.url, download: "" });
        document.body.append(a);
        a.click();
        a.remove();
        return;
      }
      if (action === "export-again" && task.encrypted) return askNewPassword(task);
      if (action === "export-again") {
        const fresh = await call("POST", "/export-tasks/" + task.id + "/export-again");
        showCreated(fresh, fresh.deduplicated ? "deduplicated" : "exportedAgain");
        return;
      }
      const updated = await call("POST", "/export-tasks/" + task.id + "/" + action);
      say(t(action === "retry" ? "retried" : "cancelRequested", { name: task.taskName }), "ok");
      applyTask(updated);
    } catch (e) {
      if (e.data && e.data.reason === "COLUMNS_NOT_PERMITTED") return offerExportAgain(task, e.data);
      say(e.message, "error");
    }
  }

  // Export again of a password-protected file: its password was never kept,
  // so the new file needs a new one, asked for under the message.
  function askNewPassword(task) {
    say(t("newPasswordFor", { name: task.taskName }), "ok");
    const input = el("input", { id: "again-password", type: "password", autocomplete: "new-password",
      maxlength: "128", "aria-label": t("filePassword") + " " + task.taskName });
    const go = el("button", { type: "button", "data-action": "export-again-password", class: "primary",
      text: t("exportAgain"), onclick: async () => {
        const password = input.value;
        const problem = passwordProblem(password, true);
        if (problem) {
          say(problem, "error");
          $("msg").append(" ", input, " ", go);  // the message replaced them: keep asking
          fieldError(input, problem);
          return;
        }
        input.value = "";
        try {
          const fresh = await call("POST", "/export-tasks/" + task.id + "/export-again", { filePassword: password });
          showCreated(fresh, "exportedAgain");
        } catch (e) {
          say(e.message, "error");
        }
      } });
    $("msg").append(" ", input, " ", go);
    input.focus();
  }

  // A file governed for someone who may see more than the caller
  // (docs/http-api.md#column-governance-of-downloads): say which columns, and
  // offer a file of the caller's own.
  function offerExportAgain(task, data) {
    say(t("widerFile", { columns: (data.columns || []).join(", ") }), "error");
    $("msg").append(" ", el("button", {
      type: "button", "data-action": "export-again-own", text: t("exportAgain"),
      "aria-label": t("exportAgain") + " " + task.taskName,
      onclick: () => act("export-again", task),
    }));
  }

  // Whether a change of the open task can have added to its timeline: a new
  // state, version, cancel or download, or progress past another tenth (the
  // server samples progress events by tenths). Other progress moves do not
  // read the timeline again.
  function timelineMoved(before, after) {
    if (!before) return true;
    const tenth = (t) => (t.progress === null || t.progress === undefined ? -1 : Math.floor(t.progress / 10));
    return before.status !== after.status || before.dispatchVersion !== after.dispatchVersion ||
      before.cancelRequested !== after.cancelRequested || before.downloadCount !== after.downloadCount ||
      tenth(before) !== tenth(after);
  }

  // A task changed (event, action, create): update its row in place, or
  // reload the page of the list when it enters or leaves it.
  function applyTask(task) {
    const shown = $("created").querySelector('tr[data-id="' + task.id + '"]');
    if (shown) {
      const before = state.created;
      state.created = task;
      shown.replaceWith(buildRow(task));
      if (state.detailFor === task.id && !state.rows.has(task.id) && timelineMoved(before, task)) {
        showTaskDetail(task.id);
      }
    }
    const entry = state.rows.get(task.id);
    if (entry) {
      if (!matchesFilters(task)) return scheduleReload();
      const tr = buildRow(task);
      const focused = entry.tr.contains(document.activeElement) ? document.activeElement.dataset.action : null;
      entry.tr.replaceWith(tr);
      state.rows.set(task.id, { task, tr });
      if (state.detailFor === task.id && timelineMoved(entry.task, task)) showTaskDetail(task.id);
      if (focused) {
        const again = tr.querySelector('[data-action="' + focused + '"]');
        (again || tr.querySelector("button") || $("tasks")).focus();
      }
    } else if (matchesFilters(task) && state.page === 1 && belongsOnFirstPage(task)) {
      scheduleReload();
    }
  }

  // The list is newest first: a change of an older task (on a later page)
  // does not reload the first page.
  function belongsOnFirstPage(task) {
    if (state.rows.size < PAGE_SIZE) return true;
    let oldest = null;
    for (const { task: shown } of state.rows.values()) {
      if (oldest === null || shown.requestedAt < oldest) oldest = shown.requestedAt;
    }
    return task.requestedAt >= oldest;
  }

  // Countdowns and ETAs move without new data.
  function tick() {
    for (const node of document.querySelectorAll("[data-expires]")) node.textContent = expiryText(node.dataset.expires);
    for (const { task, tr } of state.rows.values()) {
      const node = tr.querySelector("[data-eta]");
      const eta = etaOf(task);
      if (node && eta !== null) node.textContent = t("eta", { d: formatDuration(eta) });
    }
  }

  // ---- live updates --------------------------------------------------------

  let events = null, pollTimer = null, sseRetryTimer = null;
  // Every connect is a new EventSource with a new ticket (a ticket opens one
  // stream), so the page carries the last event id itself.
  let liveGeneration = 0, lastEventId = "";
  const SSE_RECONNECT_MS = 3000;

  function setLive(live) {
    $("live").textContent = t(live ? "live" : "polling");
    $("live").className = "live " + (live ? "on" : "off");
    document.body.dataset.live = live ? "sse" : "polling";
  }

  function retryLive(ms) {
    clearTimeout(sseRetryTimer);
    sseRetryTimer = setTimeout(startLive, ms);
  }

  // Closes the stream and forgets a pending connect; polling goes on.
  function closeEvents() {
    ++liveGeneration;
    if (events) events.close();
    events = null;
    clearTimeout(sseRetryTimer);
  }

  async function startLive() {
    closeEvents();
    const generation = liveGeneration;
    // EventSource cannot send headers, and a bearer token in the URL would be
    // logged by every proxy: fetch a single-use ticket with the current token
    // (valid for one connect within 30 s) and put only that in the URL.
    let ticket;
    try {
      ticket = (await call("POST", "/export-tasks/events-ticket")).ticket;
    } catch (e) {
      if (generation !== liveGeneration || !token()) return;
      startPolling();
      retryLive(SSE_RETRY_MS);
      return;
    }
    if (generation !== liveGeneration) return;
    let url = API + "/export-tasks/events?ticket=" + encodeURIComponent(ticket);
    if (lastEventId) url += "&lastEventId=" + encodeURIComponent(lastEventId);
    const source = new EventSource(url);
    let opened = false;
    events = source;
    source.addEventListener("open", () => {
      opened = true;
      const wasPolling = pollTimer !== null;
      stopPolling();
      setLive(true);
      if (wasPolling) loadTasks();  // catch up on what polling may have missed
    });
    source.addEventListener("task", (ev) => {
      if (ev.lastEventId) lastEventId = ev.lastEventId;
      try { applyTask(JSON.parse(ev.data)); } catch (e) { /* a malformed event changes nothing */ }
    });
    // The token that opened the stream expired: reconnect with the current
    // one (a refreshed token, or a sign-in prompt when there is none).
    source.addEventListener("reauth", () => {
      if (events === source) startLive();
    });
    source.addEventListener("error", () => {
      if (events !== source) return;
      // The browser's own reconnect would reuse the spent ticket: close and
      // reconnect with a new one, polling meanwhile. A stream refused from
      // the start (a cap, an outage) waits longer than a dropped one.
      source.close();
      events = null;
      startPolling();
      retryLive(opened ? SSE_RECONNECT_MS : SSE_RETRY_MS);
    });
  }

  function startPolling() {
    setLive(false);
    if (pollTimer === null) pollTimer = setInterval(loadTasks, POLL_MS);
  }

  function stopPolling() {
    if (pollTimer !== null) clearInterval(pollTimer);
    pollTimer = null;
  }

  function stopLive() {
    closeEvents();
    stopPolling();
  }

  // ---- tabs, filters, pages ------------------------------------------------

  function renderTabs() {
    const tabs = $("tabs");
    tabs.replaceChildren();
    for (const name of Object.keys(TABS)) {
      const selected = name === state.tab;
      tabs.append(el("button", {
        type: "button", role: "tab", id: "tab-" + name, "data-tab": name,
        "aria-selected": selected ? "true" : "false", "aria-controls": "task-table",
        tabindex: selected ? "0" : "-1", text: t("tab_" + name),
        onclick: () => selectTab(name),
      }));
    }
    $("tab-help").textContent = t("help_" + state.tab);
  }

  // Back to the first page (a filter changed).
  function firstPage() {
    state.page = 1;
    state.after = null;
    state.back = [];
  }

  function nextPage() {
    if (!state.nextCursor) return;
    state.back.push(state.after);
    state.after = state.nextCursor;
    state.page++;
    loadTasks();
  }

  function previousPage() {
    if (state.page <= 1) return;
    state.after = state.back.pop() || null;
    state.page--;
    loadTasks();
  }

  function selectTab(name, focus) {
    state.tab = name;
    firstPage();
    renderTabs();
    if (focus) $("tab-" + name).focus();
    loadTasks();
  }

  // Arrow keys move between tabs (the WAI-ARIA tabs pattern).
  function onTabKey(ev) {
    const names = Object.keys(TABS);
    let i = names.indexOf(state.tab);
    if (ev.key === "ArrowRight") i = (i + 1) % names.length;
    else if (ev.key === "ArrowLeft") i = (i - 1 + names.length) % names.length;
    else if (ev.key === "Home") i = 0;
    else if (ev.key === "End") i = names.length - 1;
    else return;
    ev.preventDefault();
    selectTab(names[i], true);
  }

  function renderTypeFilter() {
    const select = $("type-filter");
    select.replaceChildren(el("option", { value: "", text: t("allTypes") }));
    for (const def of state.types.values()) {
      select.append(el("option", { value: def.exportType, text: def.title || def.exportType, selected: def.exportType === state.type }));
    }
  }

  // ---- the create form -----------------------------------------------------

  function renderTypeChoice() {
    const select = $("create-type");
    const chosen = select.value;
    select.replaceChildren();
    for (const def of state.types.values()) {
      select.append(el("option", { value: def.exportType, text: def.title || def.exportType, selected: def.exportType === chosen }));
    }
    renderParams();
  }

  function paramControl(p, id) {
    const allowed = p.allowed || [];
    if (allowed.length > 0) {
      const multiple = p.type === "STRING_LIST";
      const select = el("select", { id, name: p.name, multiple, required: p.required });
      if (!multiple) select.append(el("option", { value: "", text: t("none") }));
      for (const v of allowed) select.append(el("option", { value: v, text: v }));
      return select;
    }
    switch (p.type) {
      case "INTEGER": return el("input", { id, name: p.name, type: "number", step: "1", inputmode: "numeric", required: p.required });
      case "DATE": return el("input", { id, name: p.name, type: "date", required: p.required });
      case "BOOLEAN": {
        const select = el("select", { id, name: p.name, required: p.required });
        select.append(el("option", { value: "", text: t("none") }), el("option", { value: "true", text: t("yes") }),
          el("option", { value: "false", text: t("no") }));
        return select;
      }
      case "STRING_LIST": return el("input", { id, name: p.name, type: "text", placeholder: t("listHint"), required: p.required });
      case "STRING": return el("input", { id, name: p.name, type: "text", required: p.required });
      default: return el("textarea", { id, name: p.name, rows: "2", placeholder: "{ }", spellcheck: "false", required: p.required });
    }
  }

  function renderParams() {
    const def = state.types.get($("create-type").value);
    const box = $("create-params");
    box.replaceChildren();
    $("create-name").placeholder = def ? def.title || def.exportType : "";
    renderPasswordField(def);
    if (!def) return;
    def.parameters.forEach((p, i) => {
      const id = "param-" + i;
      box.append(el("label", { for: id, class: "param" },
        el("span", { text: (p.title || p.name) + (p.required ? " *" : "") }),
        el("small", { class: "ptype", text: p.type + (p.allowed && p.allowed.length ? " · " + p.allowed.join(" / ") : "") }),
        paramControl(p, id)));
    });
  }

  // The file password field: shown when the type takes one (filePassword
  // OPTIONAL or REQUIRED for this caller), marked and required when REQUIRED.
  function renderPasswordField(def) {
    const policy = def && def.filePassword ? def.filePassword : "NONE";
    const input = $("create-password");
    $("create-password-row").hidden = policy === "NONE";
    input.required = policy === "REQUIRED";
    $("create-password-label").textContent = t("filePassword") + (policy === "REQUIRED" ? " *" : "");
    if (policy === "NONE") input.value = "";
  }

  // The strength rule of docs/configuration.md#password-protected-files-file-password,
  // checked before sending; the server checks it again. "" when it passes.
  function passwordProblem(password, required) {
    if (password === "") return required ? t("passwordRequired") : "";
    const chars = Array.from(password);
    if (chars.length < 8 || chars.length > 128) return t("passwordLength");
    if (chars.some((c) => /[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/.test(c))) {
      return t("passwordControl");
    }
    const classes = new Set(chars.map((c) => (/[a-z]/.test(c) ? "a" : /[A-Z]/.test(c) ? "A" : /[0-9]/.test(c) ? "0" : "*")));
    return classes.size < 2 ? t("passwordClasses") : "";
  }

  // What was entered, to put back after the form is rebuilt in another language.
  function paramValues() {
    return Array.from($("create-params").querySelectorAll("input, select, textarea"), (c) =>
      c.multiple ? Array.from(c.selectedOptions, (o) => o.value) : c.value);
  }

  function restoreParamValues(values) {
    $("create-params").querySelectorAll("input, select, textarea").forEach((c, i) => {
      if (i >= values.length) return;
      if (c.multiple) for (const o of c.options) o.selected = values[i].includes(o.value);
      else c.value = values[i];
    });
  }

  // The request body, or throws a message naming the bad field. The preview
  // writes no file: its body carries no password.
  function formBody(forPreview) {
    const def = state.types.get($("create-type").value);
    // The page's language goes with every create and preview: the file's
    // titles and labels are written in it, on every retry too.
    const body = { exportType: def.exportType, format: document.querySelector('input[name="format"]:checked').value, parameters: {}, locale: lang };
    const name = $("create-name").value.trim();
    if (name) body.taskName = name;
    const password = $("create-password");
    if (!forPreview && !$("create-password-row").hidden) {
      const problem = passwordProblem(password.value, password.required);
      if (problem) throw fieldError(password, problem);
      if (password.value !== "") body.filePassword = password.value;
    }
    def.parameters.forEach((p, i) => {
      const control = $("param-" + i);
      const label = p.title || p.name;
      let value;
      if (control.multiple) {
        value = Array.from(control.selectedOptions, (o) => o.value);
        if (value.length === 0) return;
      } else {
        const text = control.value.trim();
        if (text === "") return;
        if (p.type === "INTEGER") {
          if (!/^-?\d+$/.test(text)) throw fieldError(control, t("badInteger", { name: label }));
          value = Number.isSafeInteger(Number(text)) ? Number(text) : text;
        } else if (p.type === "BOOLEAN") {
          value = text === "true";
        } else if (p.type === "STRING_LIST") {
          value = text.split(/[,，]/).map((s) => s.trim()).filter((s) => s);
        } else if (["STRING", "DATE"].includes(p.type) || (p.allowed && p.allowed.length)) {
          value = text;
        } else {
          try { value = JSON.parse(text); } catch (e) { throw fieldError(control, t("badJson", { name: label })); }
        }
      }
      body.parameters[p.name] = value;
    });
    return body;
  }

  function fieldError(control, message) {
    control.setAttribute("aria-invalid", "true");
    control.focus();
    return new Error(message);
  }

  async function submitCreate(ev) {
    ev.preventDefault();
    for (const c of $("create").querySelectorAll("[aria-invalid]")) c.removeAttribute("aria-invalid");
    const button = $("create-submit");
    try {
      const body = formBody();
      button.disabled = true;
      const task = await call("POST", "/export-tasks", body);
      $("create-password").value = "";  // never kept once the task has it
      showCreated(task);
    } catch (e) {
      say(e.message, "error");
    } finally {
      button.disabled = false;
    }
  }

  // The returned task at once, above the list and at the top of its first page.
  function showCreated(task, text) {
    say(t(text || (task.deduplicated ? "deduplicated" : "created"), { name: task.taskName }), "ok");
    state.created = task;
    renderCreated();
    if (state.page === 1 && matchesFilters(task) && !state.rows.has(task.id)) {
      const tr = buildRow(task);
      state.rows.set(task.id, { task, tr });
      $("rows").prepend(tr);
      $("empty").hidden = true;
    }
    scheduleReload();
  }

  function renderCreated() {
    const box = $("created");
    if (!state.created) return box.replaceChildren();
    box.replaceChildren(el("table", { class: "mini" }, el("tbody", {}, buildRow(state.created))));
  }

  // ---- the preview -------------------------------------------------------

  // The preview shown belongs to the form as it was when asked: a change of
  // type, format or parameter clears it (and drops an answer still on its
  // way), so what is shown is never mistaken for the export about to start.
  let previewSeq = 0;
  let shownPreview = null;  // the last answer, kept to re-render in another language

  function clearPreview() {
    previewSeq++;
    shownPreview = null;
    $("preview-status").replaceChildren();
    $("preview").replaceChildren();
    setPreviewBusy(false);
  }

  function setPreviewBusy(busy) {
    const button = $("preview-button");
    button.disabled = busy;  // one preview at a time: each counts toward the per-user limit
    if (busy) button.setAttribute("aria-busy", "true"); else button.removeAttribute("aria-busy");
  }

  // The task name does not change the rows; everything else in the form does.
  function onFormEdited(ev) {
    if (ev.target && ev.target.id !== "create-name") clearPreview();
  }

  async function runPreview() {
    clearPreview();
    let body;
    try { body = formBody(true); } catch (e) { return say(e.message, "error"); }
    const seq = previewSeq;
    setPreviewBusy(true);
    $("preview-status").append(el("p", { class: "count", text: t("previewRunning") }));
    try {
      const data = await call("POST", "/export-previews", body);
      if (seq !== previewSeq) return;  // the form changed meanwhile
      shownPreview = data;
      renderPreview();
    } catch (e) {
      if (seq !== previewSeq) return;
      $("preview-status").replaceChildren();
      if (e.code === "404") $("preview-status").append(el("p", { class: "unavailable", text: t("previewUnavailable") }));
      else say(e.message, "error");
    } finally {
      if (seq === previewSeq) setPreviewBusy(false);
    }
  }

  // Over the limit the page offers a narrower filter first, then what the type allows.
  function suggestionText(data) {
    const keys = ["FILTER", ...(data.suggestions || [])];
    return keys.map((x) => TEXT[lang]["suggest_" + x] ? t("suggest_" + x) : x).join(lang === "en" ? "; " : "、");
  }

  function renderPreview() {
    const data = shownPreview;
    const status = $("preview-status");
    const box = $("preview");
    status.replaceChildren();
    box.replaceChildren();
    if (!data) return;
    const count = data.rowCount || {};
    const rows = data.rows || [];
    status.append(el("p", { class: "count" },
      t(count.exact === false ? "previewCountApprox" : "previewCount", { n: formatNumber(count.value || 0) }),
      rows.length ? el("span", { class: "note", text: " · " + t("previewShown", { n: rows.length }) }) : null));
    const governed = governedNote(data.columnPolicy);
    if (governed) status.append(governed);
    if (data.exceedsMaxRows) {
      status.append(el("p", { class: "warn", text: t("previewTooMany", { max: formatNumber(data.maxRows), s: suggestionText(data) }) }));
    }
    const columns = data.columns || [];
    const numeric = columns.map((c) => c.type === "INTEGER" || c.type === "DECIMAL");
    const body = rows.map((r) => el("tr", {}, ...r.map((cell, i) =>
      el("td", { class: numeric[i] ? "num" : null, text: cell === null ? "" : String(cell) }))));
    // A wide table scrolls inside its own box, which takes keyboard focus so
    // the arrow keys scroll it too.
    box.append(el("div", { class: "table-wrap preview-wrap", role: "region", tabindex: "0", "aria-label": t("previewTable") },
      el("table", { class: "preview-table" }, el("thead", {}, ...headerRows(columns)), el("tbody", {}, ...body))));
  }

  // The preview's header rows, grouped as the file's (docs/xlsx.md#grouped-headers):
  // level r of a column with levels below it is one cell spanning the adjacent
  // columns whose levels 0..r are equal; a column's last level sits at its
  // depth and, when shallower than the deepest, spans down to the last row.
  function headerRows(columns) {
    const paths = columns.map((c) => Array.isArray(c.titlePath) && c.titlePath.length
      ? c.titlePath.map(String) : [c.title || c.key]);
    const depth = Math.max(1, ...paths.map((p) => p.length));
    const samePrefix = (a, b, r) => a.slice(0, r + 1).every((x, k) => x === b[k]);
    const out = [];
    for (let r = 0; r < depth; r++) {
      const cells = [];
      for (let c = 0; c < paths.length;) {
        const p = paths[c];
        if (r === p.length - 1) {
          const down = depth - r;
          cells.push(el("th", { scope: "col", rowspan: down > 1 ? String(down) : null, text: p[r] }));
          c++;
        } else if (r < p.length - 1) {
          let e = c + 1;
          while (e < paths.length && paths[e].length > r + 1 && samePrefix(paths[e], p, r)) e++;
          cells.push(el("th", { scope: "colgroup", class: "group", colspan: e - c > 1 ? String(e - c) : null, text: p[r] }));
          c = e;
        } else {
          c++;  // under a shallower column's last level, which spans down
        }
      }
      out.push(el("tr", {}, ...cells));
    }
    return out;
  }

  // ---- the operators' console ---------------------------------------------
  // (docs/download-center.md#operators-console) For a token holding
  // platform:export:operate or platform:export:operate-all: the page finds out
  // by asking the console's cheapest route, and offers the view only then.

  const OP_STATES = ["", "PENDING", "RUNNING", "SUCCEEDED", "FAILED", "CANCELLED", "EXPIRED", "STALE", "INCONSISTENT"];
  const op = {
    available: false, shown: false, filter: {},
    found: null, detail: null, audit: [], stats: null, health: null,
    pending: null,  // the counted bulk action awaiting confirmation: { action, filter, matched }
    result: null,   // the last bulk action's audit row
  };

  function opSay(text, kind) {
    $("op-msg").textContent = text || "";
    $("op-msg").className = "msg" + (kind ? " " + kind : "");
  }

  async function detectOperator() {
    try {
      op.health = await call("GET", "/operator/queue-health");
      op.available = true;
    } catch (e) {
      op.available = false;
    }
    $("view-toggle").hidden = !op.available;
  }

  function showConsole(show) {
    op.shown = show;
    $("app").hidden = show;
    $("console").hidden = !show;
    $("view-toggle").textContent = t(show ? "opClose" : "opOpen");
    if (show) loadConsole();
  }

  // The filter of the search form: only fields with a value; times as UTC.
  function opFilterFromForm() {
    const f = {};
    for (const [id, name] of [["op-tenant", "tenantId"], ["op-user", "user"], ["op-type", "exportType"],
      ["op-status", "status"], ["op-code", "failureCode"]]) {
      const v = $(id).value.trim();
      if (v) f[name] = v;
    }
    for (const [id, name] of [["op-from", "from"], ["op-to", "to"]]) {
      const v = $(id).value;
      if (v) f[name] = new Date(v).toISOString();  // the picker's local time
    }
    return f;
  }

  async function loadConsole() {
    opSay("");
    await Promise.all([opSearch(), loadAudit(), loadStats(), loadHealth()]);
  }

  async function opSearch() {
    op.filter = opFilterFromForm();
    try {
      op.found = await call("GET", "/operator/tasks?" + new URLSearchParams({ ...op.filter, size: "50" }));
    } catch (e) {
      op.found = null;
      opSay(e.message, "error");
    }
    renderOpRows();
  }

  function renderOpStatus() {
    const select = $("op-status");
    const chosen = select.value;
    select.replaceChildren(...OP_STATES.map((s) => el("option", { value: s, text: s ? t("st_" + s) : t("opAnyStatus") })));
    select.value = chosen;
  }

  function renderOpRows() {
    const body = $("op-rows");
    body.replaceChildren();
    const records = op.found ? op.found.records : [];
    for (const task of records) {
      body.append(el("tr", { "data-id": task.id, "data-status": task.status, onclick: () => showDetail(task.id) },
        el("td", {}, el("button", { type: "button", class: "link", "data-action": "detail", text: task.id })),
        el("td", { class: "tenant", text: task.tenantId }),
        el("td", { class: "user", text: task.requestedBy }),
        el("td", { text: task.exportType }),
        el("td", {}, el("span", { class: "badge st-" + task.status.toLowerCase(), text: t("st_" + task.status) })),
        el("td", { text: task.failureCode || "" }),
        el("td", { text: formatTime(task.requestedAt) }),
        el("td", { class: "lease", text: task.leaseOwner || "" })));
    }
    $("op-total").textContent = op.found
      ? t("opTotal", { n: formatNumber(op.found.total) + (op.found.totalIsExact === false ? "+" : "") }) : "";
  }

  async function showDetail(id) {
    try {
      op.detail = await call("GET", "/operator/tasks/" + id);
    } catch (e) {
      op.detail = null;
      opSay(e.message, "error");
    }
    renderDetail();
    if (op.detail) $("op-detail").focus();
  }

  function fact(list, label, value) {
    list.append(el("dt", { text: label }), el("dd", { "data-fact": label, text: value === null || value === undefined || value === "" ? t("opNone") : String(value) }));
  }

  function renderDetail() {
    const box = $("op-detail");
    box.hidden = !op.detail;
    if (!op.detail) return;
    const { task, commands, notifications, timeline } = op.detail;
    box.dataset.id = task.id;
    const facts = $("op-detail-facts");
    facts.replaceChildren();
    fact(facts, t("opColId"), task.id + " · " + task.taskName);
    fact(facts, t("opTenant"), task.tenantId + " / " + task.requestedBy);
    fact(facts, t("colStatus"), t("st_" + task.status) + (task.failureCode ? " · " + task.failureCode : ""));
    facts.lastChild.dataset.status = task.status;
    fact(facts, t("opDispatchVersion"), task.dispatchVersion);
    facts.lastChild.id = "op-dispatch-version";
    fact(facts, t("opLeaseOwner"), task.leaseOwner);
    facts.lastChild.id = "op-lease-owner";
    fact(facts, t("opLeaseUntil"), formatTime(task.leaseUntil));
    fact(facts, t("opHeartbeat"), formatTime(task.lastHeartbeatAt));
    fact(facts, t("opAttempts"), task.attemptCount + " / " + task.maxAttempts);
    const current = commands.filter((c) => c.dispatchVersion === task.dispatchVersion).pop();
    fact(facts, t("opOutboxState"), current ? current.status : null);
    facts.lastChild.id = "op-outbox-state";
    // Why it failed, in full: the user's row shows the classified failureMessage.
    if (task.failureDetail) {
      fact(facts, t("opFailureDetail"), task.failureDetail);
      facts.lastChild.id = "op-failure-detail";
    }
    $("op-commands").tBodies[0].replaceChildren(...commands.map((c) => el("tr", { "data-version": String(c.dispatchVersion) },
      el("td", { text: "v" + c.dispatchVersion }), el("td", { class: "state", text: c.status }),
      el("td", { text: t("opAttempts") + " " + c.attemptCount }),
      el("td", { text: c.sentAt ? formatTime(c.sentAt) : formatTime(c.nextRetryAt) }),
      el("td", { text: c.lastError || "" }))));
    $("op-notifications").tBodies[0].replaceChildren(...notifications.map((n) => el("tr", {},
      el("td", { text: n.receiverId }), el("td", { text: n.taskStatus }), el("td", { text: n.status }),
      el("td", { text: n.lastError || "" }))));
    renderOperatorTimeline(timeline);
  }

  // The detail's timeline, read with it (GET /operator/tasks/{id}).
  function renderOperatorTimeline(events) {
    $("op-timeline").replaceChildren(timelineList(events));
  }

  // ---- bulk actions: count, confirm, act ----

  async function countBulk(action) {
    op.pending = null;
    op.result = null;
    renderBulk();
    const filter = opFilterFromForm();
    try {
      const counted = await call("POST", "/operator/bulk-actions/count", { action, filter });
      op.pending = { action, filter, matched: counted.matched, fingerprint: counted.fingerprint };
    } catch (e) {
      opSay(e.message, "error");
    }
    renderBulk();
    if (op.pending && op.pending.matched !== "0") $("op-confirm-yes").focus();
  }

  async function confirmBulk() {
    const pending = op.pending;
    if (!pending) return;
    op.pending = null;
    renderBulk();
    try {
      op.result = await call("POST", "/operator/bulk-actions",
        { action: pending.action, filter: pending.filter, expectedCount: pending.matched,
          expectedFingerprint: pending.fingerprint });
    } catch (e) {
      opSay(e.message, "error");  // a changed count: count again
    }
    renderBulk();
    await Promise.all([opSearch(), loadAudit(), loadStats(), loadHealth(), refreshDetail()]);
  }

  // The open detail after an action: its task may have changed.
  async function refreshDetail() {
    if (!op.detail) return;
    try {
      op.detail = await call("GET", "/operator/tasks/" + op.detail.task.id);
    } catch (e) {
      op.detail = null;
    }
    renderDetail();
  }

  function renderBulk() {
    const box = $("op-confirm");
    const pending = op.pending;
    box.hidden = !pending || pending.matched === "0";
    if (pending) box.dataset.matched = pending.matched;
    $("op-confirm-text").textContent = pending ? t("opConfirm" + pending.action, { n: formatNumber(pending.matched) }) : "";
    const result = $("op-bulk-result");
    if (pending && pending.matched === "0") result.textContent = t("opNothing");
    else if (op.result) {
      const r = op.result;
      result.textContent = t("opBulkDone", { action: t("act_" + r.action), matched: r.matched,
        succeeded: r.succeeded, skipped: r.skipped, failed: r.failed });
    } else result.textContent = "";
  }

  async function loadAudit() {
    try {
      op.audit = (await call("GET", "/operator/bulk-actions")).records;
    } catch (e) {
      op.audit = [];
    }
    renderAudit();
  }

  function renderAudit() {
    const head = el("tr", {}, ...["opStarted", "opWho", "opAction", "opFilter", "opMatched", "opOutcome"].map(
      (k) => el("th", { scope: "col", text: t(k) })));
    const rows = op.audit.map((a) => el("tr", { "data-id": a.id, "data-action": a.action },
      el("td", { text: formatTime(a.startedAt) }), el("td", { text: a.actor }),
      el("td", { text: t("act_" + a.action) }), el("td", { class: "filter", text: JSON.stringify(a.filter) }),
      el("td", { text: a.matched }),
      el("td", { text: a.outcome + " · " + a.succeeded + " / " + a.skipped + " / " + a.failed })));
    $("op-audit").tBodies[0].replaceChildren(head, ...rows);
  }

  async function loadStats() {
    try {
      op.stats = await call("GET", "/operator/stats");
    } catch (e) {
      op.stats = null;
    }
    renderStats();
  }

  function ms(v) { return v === null || v === undefined ? "–" : formatDuration(v); }

  function renderStats() {
    const box = $("op-stats");
    box.replaceChildren();
    if (!op.stats) return;
    for (const w of op.stats.windows) {
      const head = el("tr", {}, ...["colType", "opCount", "opSuccessRate", "opWait", "opDuration", "opRowsPerSecond",
        "opBytes", "opTopFailures"].map((k) => el("th", { scope: "col", text: t(k) })));
      const rows = w.types.map((s) => el("tr", { "data-type": s.exportType },
        el("td", { text: s.exportType }), el("td", { class: "count", text: formatNumber(s.count) }),
        el("td", { class: "rate", text: s.successRate === null ? "–" : Math.round(s.successRate * 100) + "%" }),
        el("td", { text: ms(s.waitP50Ms) + " / " + ms(s.waitP95Ms) }),
        el("td", { text: ms(s.durationP50Ms) + " / " + ms(s.durationP95Ms) }),
        el("td", { text: s.rowsPerSecond === null ? "–" : formatNumber(Math.round(s.rowsPerSecond)) }),
        el("td", { text: formatSize(s.bytes) }),
        el("td", { class: "codes", text: s.topFailureCodes.map((c) => c.code + " ×" + c.count).join(", ") })));
      box.append(el("h3", { text: t("win_" + w.window) }),
        el("div", { class: "table-wrap" }, el("table", { "data-window": w.window }, el("tbody", {}, head, ...rows))));
      if (!w.types.length) box.append(el("p", { class: "help", text: t("opNoStats") }));
    }
  }

  async function loadHealth() {
    try {
      op.health = await call("GET", "/operator/queue-health");
    } catch (e) {
      op.health = null;
    }
    renderHealth();
  }

  function renderHealth() {
    const h = op.health;
    const facts = $("op-health");
    facts.replaceChildren();
    $("op-instances").tBodies[0].replaceChildren();
    $("op-dead").tBodies[0].replaceChildren();
    if (!h) return;
    fact(facts, t("opDueCommands"), formatNumber(h.dueCommands));
    facts.lastChild.id = "op-due";
    fact(facts, t("opOldestDue"), h.oldestDueAgeMs === null ? null : formatDuration(h.oldestDueAgeMs));
    fact(facts, t("opDeadCount"), formatNumber(h.deadNotifications));
    facts.lastChild.id = "op-dead-count";
    $("op-instances").tBodies[0].replaceChildren(...(h.runningPerInstance.length
      ? h.runningPerInstance.map((r) => el("tr", { "data-instance": r.instance },
        el("td", { text: r.instance || t("opNone") }), el("td", { text: formatNumber(r.running) })))
      : [el("tr", {}, el("td", { text: t("opNoRunning") }))]));
    $("op-dead").tBodies[0].replaceChildren(...(h.deadDeliveries.length
      ? h.deadDeliveries.map((n) => el("tr", { "data-id": n.id },
        el("td", { text: n.taskId }), el("td", { text: n.receiverId }), el("td", { text: n.taskStatus }),
        el("td", { text: n.lastError || "" }),
        el("td", {}, el("button", { type: "button", "data-action": "redeliver", text: t("opRedeliver"),
          onclick: () => redeliver(n.id) }))))
      : [el("tr", {}, el("td", { text: t("opNoDead") }))]));
  }

  async function redeliver(id) {
    try {
      await call("POST", "/operator/notifications/" + id + "/redeliver");
      opSay(t("opRedelivered", { id }), "ok");
    } catch (e) {
      opSay(e.message, "error");
    }
    await Promise.all([loadHealth(), loadAudit()]);
  }

  function renderConsole() {
    renderOpStatus();
    $("view-toggle").textContent = t(op.shown ? "opClose" : "opOpen");
    renderOpRows();
    renderDetail();
    renderBulk();
    renderAudit();
    renderStats();
    renderHealth();
  }

  function initConsole() {
    $("view-toggle").addEventListener("click", () => showConsole(!op.shown));
    $("op-search").addEventListener("submit", (ev) => { ev.preventDefault(); opSearch(); });
    for (const id of ["op-bulk-retry", "op-bulk-cancel"]) {
      $(id).addEventListener("click", () => countBulk($(id).dataset.bulk));
    }
    $("op-confirm-yes").addEventListener("click", confirmBulk);
    $("op-confirm-no").addEventListener("click", () => { op.pending = null; renderBulk(); });
  }

  // ---- language ------------------------------------------------------------

  function applyLanguage() {
    document.documentElement.lang = lang;
    document.title = t("title");
    for (const node of document.querySelectorAll("[data-i18n]")) node.textContent = t(node.dataset.i18n);
    const other = lang === "en" ? "zh-CN" : "en";
    $("lang").textContent = other === "en" ? "English" : "中文";
    $("lang").lang = other;
    renderTabs();
    renderTypeFilter();
    if (state.types.size) {
      const values = paramValues();
      renderParams();
      restoreParamValues(values);
    }
    renderPreview();
    renderCreated();
    renderRows(Array.from(state.rows.values(), (r) => r.task));
    if (events || pollTimer !== null) setLive(pollTimer === null);
    renderConsole();
  }

  // ---- start ---------------------------------------------------------------

  async function enter() {
    $("signin").hidden = true;
    $("app").hidden = false;
    $("signout").hidden = false;
    say("");
    try {
      const types = await call("GET", "/export-types");
      state.types = new Map(types.map((d) => [d.exportType, d]));
    } catch (e) {
      if (!token()) return;
      say(e.message, "error");
    }
    renderTypeFilter();
    renderTypeChoice();
    renderTabs();
    await loadTasks();
    startLive();
    await detectOperator();
  }

  function init() {
    takeTokenFromHash();
    applyLanguage();
    $("lang").addEventListener("click", () => {
      lang = lang === "en" ? "zh-CN" : "en";
      localStorage.setItem(LANG_KEY, lang);
      applyLanguage();
    });
    $("signout").addEventListener("click", () => signOut());
    $("token-use").addEventListener("click", () => {
      const value = $("token-box").value.trim();
      if (!value) return;
      sessionStorage.setItem(TOKEN_KEY, value);
      $("token-box").value = "";
      enter();
    });
    $("tabs").addEventListener("keydown", onTabKey);
    let searchTimer = null;
    $("search").addEventListener("input", () => {
      clearTimeout(searchTimer);
      searchTimer = setTimeout(() => { state.name = $("search").value.trim(); firstPage(); loadTasks(); }, 250);
    });
    $("type-filter").addEventListener("change", () => { state.type = $("type-filter").value; firstPage(); loadTasks(); });
    $("prev").addEventListener("click", previousPage);
    $("next").addEventListener("click", nextPage);
    $("create-type").addEventListener("change", renderParams);
    $("create").addEventListener("input", onFormEdited);
    $("create").addEventListener("change", onFormEdited);
    $("create").addEventListener("submit", submitCreate);
    $("preview-button").addEventListener("click", runPreview);
    initConsole();
    setInterval(tick, 1000);
    if (token()) enter(); else showSignIn();
  }

  init();
})();
