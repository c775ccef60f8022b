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
      // subscriptions (docs/download-center.md#subscriptions)
      views: "页面视图", viewExports: "我的导出", viewSubs: "订阅", subscribeFromForm: "订阅…", subscribe: "订阅",
      subFormNew: "新建订阅", subFormEdit: "编辑订阅：{name}", subCreate: "创建订阅", subSave: "保存修改",
      subCancelEdit: "取消编辑", subSchedule: "运行计划", subPreset: "频率",
      preset_hourly: "每小时", preset_daily: "每天", preset_weekly: "每周", preset_monthly: "每月",
      preset_custom: "自定义（cron）",
      subMinute: "每小时的第几分钟", subDay: "每月几号（1–28）", subTime: "时间（计划时区）",
      subCron: "Cron 表达式（5 个字段）",
      subCronHelp: "分 时 日 月 星期，例如“0 9 * * 1”为每周一 9:00，按计划的时区执行。",
      subDays: "星期", day_MON: "周一", day_TUE: "周二", day_WED: "周三", day_THU: "周四", day_FRI: "周五",
      day_SAT: "周六", day_SUN: "周日",
      subZone: "时区", subZoneDefault: "默认：导出类型的时区", subZoneDefaultIs: "默认：{zone}",
      subBusiness: "仅工作日（周一至周五）", subDelivery: "投递",
      subDeliveryHelp: "每次运行生成的文件都会出现在下载中心；也可以发邮件给收件人。",
      subEmails: "邮件收件人（多个用逗号分隔）", subAttach: "附上文件（不超过大小上限时）",
      subSkipEmpty: "没有数据时不发送", subsTitle: "我的订阅",
      subColSchedule: "计划", subColNext: "下次运行（本地时间）", subColLast: "上次运行", subColId: "订阅",
      subTypeUnknown: "导出类型 {type} 对您不可用", subOwner: "所有者", subEmpty: "没有订阅", more: "加载更多",
      w_hourly: "每小时第 {m} 分", w_daily: "每天 {time}", w_weekly: "每{days} {time}",
      w_monthly: "每月 {d} 日 {time}", w_cron: "cron：{cron}", w_business: "，仅工作日", daysJoin: "、",
      w_zone: "时区 {zone}", w_zoneDefault: "导出类型的时区",
      state_ACTIVE: "生效中", state_PAUSED: "已暂停",
      pause_OWNER: "已手动暂停", pause_OPERATOR: "运维人员已暂停", pause_PERMISSION_LOST: "已失去该导出的权限",
      pause_TYPE_GONE: "导出类型已停用或删除", pause_FAILURES: "连续多次运行失败，已自动暂停",
      failuresInRow: "已连续失败 {n} 次",
      run_CLAIMED: "运行中", run_CREATED: "已创建任务", run_DEFERRED: "已推迟", run_SKIPPED: "已跳过",
      run_FAILED: "失败", neverRun: "尚未运行", noNextRun: "暂停中，不会运行",
      pause: "暂停", resume: "恢复", runNow: "立即运行", edit: "编辑", subDelete: "删除",
      history: "运行记录", hideHistory: "收起运行记录",
      subCreated: "已创建订阅：{name}", subSaved: "已保存订阅：{name}", subPaused: "已暂停订阅：{name}",
      subResumed: "已恢复订阅：{name}", subRan: "已立即运行：{name}", subRanTask: "已立即运行：{name}，任务 {id}",
      subDeleted: "已删除订阅：{name}", subFilled: "已按“{name}”填好表单，请选择运行计划后创建订阅。",
      subConfirmDelete: "删除订阅“{name}”？它将不再运行；已生成的文件会保留。",
      subStale: "该订阅已在别处被修改，已重新读取最新内容，请重新修改后保存。",
      runSlot: "计划时间", runFired: "运行时间", runOutcome: "结果", runTask: "任务", runDetail: "说明",
      historyEmpty: "还没有运行记录", historyLoading: "正在读取运行记录…", showTask: "查看任务",
      rel_fixed: "固定日期", rel_today: "今天", "rel_yesterday": "昨天", "rel_last-7-days": "最近 7 天",
      "rel_last-30-days": "最近 30 天", "rel_last-week": "上周", "rel_last-month": "上个月",
      "rel_this-month-to-date": "本月至今", bound_start: "第一天", bound_end: "最后一天",
      relRange: "日期范围", relBound: "取范围的", relHelp: "每次运行时按计划的时区计算",
      fieldProblem: "“{field}”有误：{message}", field_schedule: "运行计划",
      badMinute: "分钟须为 0–59 的整数", badTime: "请填写时间（时:分）", badDay: "日期须为 1–28 的整数（每个月都有这一天）",
      noDays: "请至少选择一天", badCron: "Cron 表达式须为 5 个字段：分 时 日 月 星期",
      badZone: "未知的时区：{zone}", badEmail: "不是有效的邮件地址：{email}",
      opSubsTitle: "订阅", opAnyState: "全部状态", opSubPaused: "已暂停订阅 {id}", opSubResumed: "已恢复订阅 {id}",
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
      // subscriptions (docs/download-center.md#subscriptions)
      views: "Views", viewExports: "My exports", viewSubs: "Subscriptions", subscribeFromForm: "Subscribe…", subscribe: "Subscribe",
      subFormNew: "New subscription", subFormEdit: "Edit subscription: {name}", subCreate: "Create subscription",
      subSave: "Save changes", subCancelEdit: "Cancel editing", subSchedule: "Schedule", subPreset: "Repeat",
      preset_hourly: "Hourly", preset_daily: "Daily", preset_weekly: "Weekly", preset_monthly: "Monthly",
      preset_custom: "Custom (cron)",
      subMinute: "Minute past the hour", subDay: "Day of the month (1–28)", subTime: "Time (in the schedule's zone)",
      subCron: "Cron expression (5 fields)",
      subCronHelp: "minute hour day-of-month month day-of-week, e.g. \u201c0 9 * * 1\u201d is Mondays at 9:00, in the schedule's time zone.",
      subDays: "Days", day_MON: "Mon", day_TUE: "Tue", day_WED: "Wed", day_THU: "Thu", day_FRI: "Fri",
      day_SAT: "Sat", day_SUN: "Sun",
      subZone: "Time zone", subZoneDefault: "Default: the export type's zone", subZoneDefaultIs: "Default: {zone}",
      subBusiness: "Business days only (Monday to Friday)", subDelivery: "Delivery",
      subDeliveryHelp: "Every run's file is in the download center; it can also be e-mailed.",
      subEmails: "E-mail recipients (separate with commas)", subAttach: "Attach the file (when under the size cap)",
      subSkipEmpty: "Skip if empty", subsTitle: "My subscriptions",
      subColSchedule: "Schedule", subColNext: "Next runs (local time)", subColLast: "Last run", subColId: "Subscription",
      subTypeUnknown: "The export type {type} is not available to you", subOwner: "Owner", subEmpty: "No subscriptions", more: "Load more",
      w_hourly: "every hour at minute {m}", w_daily: "every day at {time}", w_weekly: "every {days} at {time}",
      w_monthly: "monthly on day {d} at {time}", w_cron: "cron {cron}", w_business: ", business days only",
      daysJoin: ", ", w_zone: "time zone {zone}", w_zoneDefault: "the export type's zone",
      state_ACTIVE: "Active", state_PAUSED: "Paused",
      pause_OWNER: "Paused by hand", pause_OPERATOR: "Paused by an operator",
      pause_PERMISSION_LOST: "The permission for this export was lost",
      pause_TYPE_GONE: "The export type was disabled or removed",
      pause_FAILURES: "Paused after several runs in a row failed",
      failuresInRow: "{n} failures in a row",
      run_CLAIMED: "Running", run_CREATED: "Task created", run_DEFERRED: "Deferred", run_SKIPPED: "Skipped",
      run_FAILED: "Failed", neverRun: "Not run yet", noNextRun: "Paused: no runs",
      pause: "Pause", resume: "Resume", runNow: "Run now", edit: "Edit", subDelete: "Delete",
      history: "Run history", hideHistory: "Hide run history",
      subCreated: "Subscription created: {name}", subSaved: "Subscription saved: {name}",
      subPaused: "Subscription paused: {name}", subResumed: "Subscription resumed: {name}",
      subRan: "Run started: {name}", subRanTask: "Run started: {name}, task {id}",
      subDeleted: "Subscription deleted: {name}",
      subFilled: "The form is filled from \u201c{name}\u201d; choose a schedule and create the subscription.",
      subConfirmDelete: "Delete the subscription \u201c{name}\u201d? It will not run again; the files it made are kept.",
      subStale: "The subscription was changed elsewhere; it was read again. Make your change again and save.",
      runSlot: "Slot", runFired: "Ran at", runOutcome: "Outcome", runTask: "Task", runDetail: "Detail",
      historyEmpty: "No runs yet", historyLoading: "Reading the run history…", showTask: "Show task",
      rel_fixed: "Fixed date", rel_today: "Today", "rel_yesterday": "Yesterday", "rel_last-7-days": "Last 7 days",
      "rel_last-30-days": "Last 30 days", "rel_last-week": "Last week", "rel_last-month": "Last month",
      "rel_this-month-to-date": "This month to date", bound_start: "first day", bound_end: "last day",
      relRange: "Date range", relBound: "Take its", relHelp: "worked out at each run in the schedule's time zone",
      fieldProblem: "{field}: {message}", field_schedule: "Schedule",
      badMinute: "The minute must be a whole number from 0 to 59", badTime: "Enter a time (hours:minutes)",
      badDay: "The day must be a whole number from 1 to 28 (every month has it)",
      noDays: "Choose at least one day", badCron: "A cron expression has 5 fields: minute hour day-of-month month day-of-week",
      badZone: "Unknown time zone: {zone}", badEmail: "Not a valid e-mail address: {email}",
      opSubsTitle: "Subscriptions", opAnyState: "Any state", opSubPaused: "Subscription {id} paused",
      opSubResumed: "Subscription {id} resumed",
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
    if (res.status === 204) return null;  // DELETE /subscriptions/{id}: no body
    let envelope = null;
    try { envelope = await res.json(); } catch (e) { envelope = null; }
    if (!envelope) throw new ApiError(String(res.status), t("networkError"));
    // Success is "200" by the house convention; a 201 or 202 envelope is one too.
    if (!/^2\d\d$/.test(String(envelope.code))) {
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
    // The same export on a schedule: the subscription form, filled from it.
    cell.append(el("button", {
      type: "button", class: "link", "data-action": "subscribe", "aria-label": t("subscribe") + " " + task.taskName,
      text: t("subscribe"), onclick: () => openSubForm(task, false),
    }));
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
    subTaskChanged(task);
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
      const value = paramValue(p, $("param-" + i));
      if (value !== undefined) body.parameters[p.name] = value;
    });
    return body;
  }

  // One parameter's value from its control (paramControl), undefined when
  // empty, or throws a message naming it. The create and subscription forms
  // share it.
  function paramValue(p, control) {
    const label = p.title || p.name;
    if (control.multiple) {
      const chosen = Array.from(control.selectedOptions, (o) => o.value);
      return chosen.length === 0 ? undefined : chosen;
    }
    const text = control.value.trim();
    if (text === "") return undefined;
    if (p.type === "INTEGER") {
      if (!/^-?\d+$/.test(text)) throw fieldError(control, t("badInteger", { name: label }));
      return Number.isSafeInteger(Number(text)) ? Number(text) : text;
    }
    if (p.type === "BOOLEAN") return text === "true";
    if (p.type === "STRING_LIST") return text.split(/[,，]/).map((s) => s.trim()).filter((s) => s);
    if (["STRING", "DATE"].includes(p.type) || (p.allowed && p.allowed.length)) return text;
    try { return JSON.parse(text); } catch (e) { throw fieldError(control, t("badJson", { name: label })); }
  }

  // The reverse: puts a value (a task's or a subscription's) into its control.
  function setParamControl(p, control, value) {
    if (value === undefined || value === null) return;
    if (control.multiple) {
      const wanted = (Array.isArray(value) ? value : [value]).map(String);
      for (const o of control.options) o.selected = wanted.includes(o.value);
    } else if (p.type === "BOOLEAN") {
      control.value = value === true || value === "true" ? "true" : "false";
    } else if (p.type === "STRING_LIST" && Array.isArray(value)) {
      control.value = value.join(", ");
    } else if (typeof value === "object") {
      control.value = JSON.stringify(value);
    } else {
      control.value = String(value);
    }
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

  // ---- subscriptions -------------------------------------------------------
  // (docs/download-center.md#subscriptions) The "Subscriptions" view: the
  // caller's subscriptions (GET /subscriptions), one form to create or edit
  // one — filled from the create form, from a task of the list, or from the
  // subscription being edited — and each one's run history.

  const PRESETS = ["hourly", "daily", "weekly", "monthly", "custom"];
  const DAYS = ["MON", "TUE", "WED", "THU", "FRI", "SAT", "SUN"];
  const RELATIVE = ["today", "yesterday", "last-7-days", "last-30-days", "last-week", "last-month",
    "this-month-to-date"];
  const SUB_PAGE = 20;
  const HISTORY_TASKS = 10;  // the run tasks the history reads, newest first
  const sub = {
    view: "exports",
    items: [], nextCursor: null,
    editing: null,     // the subscription the form edits (null: the form creates one)
    historyFor: null,  // the subscription whose run history is open
    runs: new Map(),   // subscription id → its runs, newest first
    runsAt: new Map(), // subscription id → its lastRunAt when its runs were read
    runTasks: new Map(),  // task id → the task a run created
    deleting: null,    // the subscription awaiting the delete confirmation
    loaded: false,
  };

  // ---- the views: my exports | subscriptions ----

  function renderViews() {
    $("views").setAttribute("aria-label", t("views"));
    for (const tab of $("views").querySelectorAll('[role="tab"]')) {
      const selected = tab.dataset.view === sub.view;
      tab.setAttribute("aria-selected", selected ? "true" : "false");
      tab.tabIndex = selected ? 0 : -1;
    }
    $("exports-view").hidden = sub.view !== "exports";
    $("subs-view").hidden = sub.view !== "subs";
  }

  // Slots come due on the server without an event to the page: while the
  // view is shown its list (next runs, last run) is read again now and then.
  const SUBS_REFRESH_MS = 30000;
  let subsRefresh = null;

  function showView(name, focus) {
    sub.view = name;
    renderViews();
    if (focus) $("view-" + (name === "subs" ? "subs" : "exports")).focus();
    clearInterval(subsRefresh);
    subsRefresh = null;
    if (name !== "subs") return;
    loadSubs();
    subsRefresh = setInterval(() => {
      if (document.hidden || $("subs-view").hidden || !token()) return;
      loadSubs(false, Math.min(100, Math.max(SUB_PAGE, sub.items.length)));
      if (sub.historyFor) showHistory(sub.historyFor, 0);
    }, SUBS_REFRESH_MS);
  }

  function onViewKey(ev) {
    const names = ["exports", "subs"];
    let i = names.indexOf(sub.view);
    if (ev.key === "ArrowRight") i = (i + 1) % names.length;
    else if (ev.key === "ArrowLeft") i = (i - 1 + names.length) % names.length;
    else if (ev.key === "Home") i = 0;
    else if (ev.key === "End") i = names.length - 1;
    else return;
    ev.preventDefault();
    showView(names[i], true);
  }

  // ---- a schedule in words ----

  const pad2 = (n) => String(n).padStart(2, "0");

  // What the API keeps ({"preset":…} as sent, with its "cron") or a bare cron
  // in words; a cron no preset describes is shown as it is.
  function scheduleWords(schedule, businessDaysOnly) {
    const s = schedule || {};
    const preset = s.preset ? s : presetOfCron(s.cron);
    let words;
    if (preset && preset.preset === "hourly") words = t("w_hourly", { m: preset.minute });
    else if (preset && preset.preset === "daily") words = t("w_daily", { time: preset.time });
    else if (preset && preset.preset === "weekly") {
      words = t("w_weekly", { days: (preset.days || []).map((d) => t("day_" + d)).join(t("daysJoin")), time: preset.time });
    } else if (preset && preset.preset === "monthly") words = t("w_monthly", { d: preset.day, time: preset.time });
    else words = t("w_cron", { cron: s.cron || "" });
    return words + (businessDaysOnly ? t("w_business") : "");
  }

  // The preset a cron expression spells (docs/subscriptions.md#schedules), or null.
  function presetOfCron(cron) {
    const f = String(cron || "").trim().split(/\s+/);
    if (f.length !== 5 || !/^\d+$/.test(f[0]) || f[3] !== "*") return null;
    const minute = Number(f[0]);
    if (f[1] === "*" && f[2] === "*" && f[4] === "*") return { preset: "hourly", minute };
    if (!/^\d+$/.test(f[1])) return null;
    const time = pad2(f[1]) + ":" + pad2(minute);
    if (f[2] === "*" && f[4] === "*") return { preset: "daily", time };
    if (/^\d+$/.test(f[2]) && f[4] === "*") return { preset: "monthly", day: Number(f[2]), time };
    if (f[2] !== "*") return null;
    const names = { 0: "SUN", 7: "SUN", 1: "MON", 2: "TUE", 3: "WED", 4: "THU", 5: "FRI", 6: "SAT" };
    const days = [];
    for (const d of f[4].split(",")) {
      const name = /^\d$/.test(d) ? names[d] : DAYS.includes(d.toUpperCase()) ? d.toUpperCase() : null;
      if (!name) return null;
      if (!days.includes(name)) days.push(name);
    }
    days.sort((a, b) => DAYS.indexOf(a) - DAYS.indexOf(b));
    return { preset: "weekly", days, time };
  }

  // ---- the form ----

  function renderSubTypeChoice() {
    const select = $("sub-type");
    const chosen = select.value;
    select.replaceChildren();
    for (const def of state.types.values()) {
      select.append(el("option", { value: def.exportType, text: def.title || def.exportType, selected: def.exportType === chosen }));
    }
    renderSubParams();
  }

  // One control per parameter as on the create form; a DATE one may also be
  // relative, worked out at each run (docs/subscriptions.md#relative-parameters):
  // a range and which end of it.
  function renderSubParams() {
    const def = state.types.get($("sub-type").value);
    const box = $("sub-params");
    box.replaceChildren();
    $("sub-name").placeholder = def ? def.title || def.exportType : "";
    const zone = def && (def.timeZone || def.timezone);
    $("sub-zone").placeholder = zone ? t("subZoneDefaultIs", { zone }) : t("subZoneDefault");
    if (!def) return;
    def.parameters.forEach((p, i) => {
      const id = "sub-param-" + i;
      const title = (p.title || p.name) + (p.required ? " *" : "");
      if (p.type !== "DATE" || (p.allowed && p.allowed.length)) {
        box.append(el("label", { for: id, class: "param" }, el("span", { text: title }),
          el("small", { class: "ptype", text: p.type + (p.allowed && p.allowed.length ? " · " + p.allowed.join(" / ") : "") }),
          paramControl(p, id)));
        return;
      }
      const range = el("select", { id: id + "-rel", "data-param": p.name, "aria-label": (p.title || p.name) + " " + t("relRange"),
        onchange: () => renderRelative(i) });
      range.append(el("option", { value: "", text: t("rel_fixed") }));
      for (const r of RELATIVE) range.append(el("option", { value: r, text: t("rel_" + r) }));
      const bound = el("select", { id: id + "-bound", "aria-label": (p.title || p.name) + " " + t("relBound") });
      bound.append(el("option", { value: "start", text: t("bound_start") }), el("option", { value: "end", text: t("bound_end") }));
      // dateTo, endDate, until: the end of the range by default.
      if (/(to|end|until)$/i.test(p.name)) bound.value = "end";
      const date = el("input", { id, name: p.name, type: "date", "aria-label": p.title || p.name });
      box.append(el("fieldset", { class: "param date", "data-param": p.name },
        el("legend", { text: title }),
        el("small", { class: "ptype", text: p.type + " · " + t("relHelp") }),
        el("div", { class: "relative" }, range, date, bound)));
      renderRelative(i);
    });
  }

  function renderRelative(i) {
    const range = $("sub-param-" + i + "-rel").value;
    $("sub-param-" + i).hidden = range !== "";
    // today and yesterday are one day: which end does not matter.
    $("sub-param-" + i + "-bound").hidden = range === "" || range === "today" || range === "yesterday";
  }

  function subParamValues() {
    return Array.from($("sub-params").querySelectorAll("input, select, textarea"), (c) =>
      c.multiple ? Array.from(c.selectedOptions, (o) => o.value) : c.value);
  }

  function restoreSubParamValues(values) {
    $("sub-params").querySelectorAll("input, select, textarea").forEach((c, i) => {
      if (i >= values.length) return;
      if (c.multiple) for (const o of c.options) o.selected = values[i].includes(o.value);
      else c.value = values[i];
    });
    const def = state.types.get($("sub-type").value);
    if (def) def.parameters.forEach((p, i) => { if ($("sub-param-" + i + "-rel")) renderRelative(i); });
  }

  function fillSubParams(def, parameters) {
    def.parameters.forEach((p, i) => {
      const value = (parameters || {})[p.name];
      const range = $("sub-param-" + i + "-rel");
      if (range && value && typeof value === "object" && value.relative) {
        range.value = value.relative;
        $("sub-param-" + i + "-bound").value = value.bound === "end" ? "end" : "start";
      } else {
        setParamControl(p, $("sub-param-" + i), value);
      }
      if (range) renderRelative(i);
    });
  }

  function renderSchedule() {
    const preset = $("sub-preset");
    const chosen = preset.value || "daily";
    preset.replaceChildren(...PRESETS.map((p) => el("option", { value: p, text: t("preset_" + p) })));
    preset.value = chosen;
    const days = $("sub-days");
    const ticked = new Set(Array.from(days.querySelectorAll("input:checked"), (c) => c.value));
    days.replaceChildren(el("legend", { text: t("subDays") }), ...DAYS.map((d) => el("label", {},
      el("input", { type: "checkbox", name: "day", value: d, checked: ticked.has(d) }), " " + t("day_" + d))));
    showScheduleControls();
  }

  // A preset as cron, to start a custom schedule from what was chosen.
  function cronOfPreset(s) {
    const [h, m] = String(s.time || "0:0").split(":").map(Number);
    if (s.preset === "hourly") return s.minute + " * * * *";
    if (s.preset === "daily") return m + " " + h + " * * *";
    if (s.preset === "weekly") return m + " " + h + " * * " + s.days.map((d) => (DAYS.indexOf(d) + 1) % 7).join(",");
    if (s.preset === "monthly") return m + " " + h + " " + s.day + " * *";
    return "";
  }

  let shownPreset = "daily";
  function onPresetChange() {
    if ($("sub-preset").value === "custom" && !$("sub-cron").value.trim()) {
      const before = $("sub-preset").value;
      $("sub-preset").value = shownPreset;
      try { $("sub-cron").value = cronOfPreset(scheduleFromForm(false)); } catch (e) { /* start empty */ }
      $("sub-preset").value = before;
    }
    showScheduleControls();
  }

  function showScheduleControls() {
    const preset = $("sub-preset").value;
    shownPreset = preset;
    for (const node of $("sub-form").querySelectorAll("[data-when]")) {
      node.hidden = !node.dataset.when.split(" ").includes(preset);
    }
    renderScheduleWords();
  }

  // The form's schedule in words as it is typed, with its zone.
  function renderScheduleWords() {
    let words = "";
    try {
      words = scheduleWords(scheduleFromForm(false), $("sub-business").checked);
    } catch (e) {
      words = "";
    }
    const zone = $("sub-zone").value.trim();
    $("sub-words").textContent = words ? words + " · " + t("w_zone", { zone: zone || t("w_zoneDefault") }) : "";
  }

  // The schedule as the API takes it, or throws a message naming the field
  // (`strict`: mark the control; else only report).
  function scheduleFromForm(strict) {
    const problem = (control, message) => (strict ? fieldError(control, message) : new Error(message));
    const preset = $("sub-preset").value;
    const time = () => {
      const v = $("sub-time").value;
      if (!/^\d{2}:\d{2}$/.test(v)) throw problem($("sub-time"), t("badTime"));
      return v;
    };
    const whole = (id, lo, hi, key) => {
      const v = $(id).value.trim();
      if (!/^\d+$/.test(v) || Number(v) < lo || Number(v) > hi) throw problem($(id), t(key));
      return Number(v);
    };
    if (preset === "hourly") return { preset, minute: whole("sub-minute", 0, 59, "badMinute") };
    if (preset === "daily") return { preset, time: time() };
    if (preset === "weekly") {
      const days = Array.from($("sub-days").querySelectorAll("input:checked"), (c) => c.value);
      if (days.length === 0) throw problem($("sub-days").querySelector("input"), t("noDays"));
      return { preset, days, time: time() };
    }
    if (preset === "monthly") return { preset, day: whole("sub-day", 1, 28, "badDay"), time: time() };
    const cron = $("sub-cron").value.trim().replace(/\s+/g, " ");
    if (cron.split(" ").length !== 5) throw problem($("sub-cron"), t("badCron"));
    return { cron };
  }

  function knownZone(zone) {
    try {
      new Intl.DateTimeFormat("en", { timeZone: zone });
      return true;
    } catch (e) {
      return false;
    }
  }

  // The request body of POST /subscriptions (PUT adds "version"), or throws a
  // message naming the bad field.
  function subBody() {
    const def = state.types.get($("sub-type").value);
    const body = {
      exportType: def.exportType, format: document.querySelector('input[name="sub-format"]:checked').value,
      parameters: {}, locale: lang,
    };
    const name = $("sub-name").value.trim();
    if (name) body.taskName = name;
    def.parameters.forEach((p, i) => {
      const range = $("sub-param-" + i + "-rel");
      if (range && range.value) {
        body.parameters[p.name] = { relative: range.value, bound: $("sub-param-" + i + "-bound").value };
        return;
      }
      const value = paramValue(p, $("sub-param-" + i));
      if (value !== undefined) body.parameters[p.name] = value;
    });
    body.schedule = scheduleFromForm(true);
    const zone = $("sub-zone").value.trim();
    if (zone) {
      if (!knownZone(zone)) throw fieldError($("sub-zone"), t("badZone", { zone }));
      body.timeZone = zone;
    }
    body.businessDaysOnly = $("sub-business").checked;
    const emails = $("sub-emails").value.split(/[,，;；\s]+/).map((x) => x.trim()).filter((x) => x);
    for (const email of emails) {
      if (!/^[^\s@]+@[^\s@]+$/.test(email)) throw fieldError($("sub-emails"), t("badEmail", { email }));
    }
    body.delivery = { emails, attach: $("sub-attach").checked, skipIfEmpty: $("sub-skip-empty").checked };
    return body;
  }

  // The control a field of the API's error names ("schedule.cron",
  // "timeZone", "parameters.dateFrom", "delivery.emails[1]") and its label.
  function subFieldControl(field) {
    const def = state.types.get($("sub-type").value);
    const param = /^parameters\.([^.[]+)/.exec(field);
    if (param && def) {
      const i = def.parameters.findIndex((p) => p.name === param[1]);
      if (i >= 0) {
        const p = def.parameters[i];
        return { control: $("sub-param-" + i + "-rel") || $("sub-param-" + i), label: p.title || p.name };
      }
    }
    const radio = document.querySelector('input[name="sub-format"]:checked');
    // A preset is a cron on the server: its error names schedule.cron.
    const preset = $("sub-preset").value;
    if (/^schedule\.cron/.test(field) && preset !== "custom") {
      const main = { hourly: "sub-minute", daily: "sub-time", weekly: "sub-time", monthly: "sub-day" }[preset];
      return { control: $(main), label: t("field_schedule") };
    }
    const table = [
      [/^schedule\.cron/, "sub-cron", "subCron"], [/^schedule\.minute/, "sub-minute", "subMinute"],
      [/^schedule\.time/, "sub-time", "subTime"], [/^schedule\.day\b(?!s)/, "sub-day", "subDay"],
      [/^schedule\.days/, null, "subDays"], [/^schedule/, null, "field_schedule"],
      [/^timeZone/, "sub-zone", "subZone"], [/^businessDaysOnly/, "sub-business", "subBusiness"],
      [/^delivery\.emails/, "sub-emails", "subEmails"], [/^delivery\.attach/, "sub-attach", "subAttach"],
      [/^delivery\.skipIfEmpty/, "sub-skip-empty", "subSkipEmpty"], [/^delivery/, "sub-emails", "subDelivery"],
      [/^exportType/, "sub-type", "exportType"], [/^taskName/, "sub-name", "taskName"], [/^format/, null, "format"],
    ];
    for (const [re, id, key] of table) {
      if (!re.test(field)) continue;
      let control = id ? $(id) : null;
      if (key === "subDays") control = $("sub-days").querySelector("input");
      else if (key === "field_schedule") control = $("sub-preset").value === "custom" ? $("sub-cron") : $("sub-preset");
      else if (key === "format") control = radio;
      return { control, label: t(key) };
    }
    return null;
  }

  // The field an error names: the envelope's data.field when the server sends
  // one, else the message's leading "field: " (docs/http-api.md).
  function errorField(e) {
    if (e.data && typeof e.data.field === "string") return e.data.field;
    const m = /^\s*((?:parameters|schedule|delivery|timeZone|businessDaysOnly|exportType|taskName|format|locale)(?:[.[][\w.[\]]*)?)\s*[:：]/.exec(e.message || "");
    return m ? m[1] : null;
  }

  function showSubError(e) {
    const field = errorField(e);
    const found = field ? subFieldControl(field) : null;
    if (found) {
      if (found.control) fieldError(found.control, "");
      say(t("fieldProblem", { field: found.label, message: e.message }), "error");
    } else {
      say(e.message, "error");
    }
  }

  function clearSubInvalid() {
    for (const c of $("sub-form").querySelectorAll("[aria-invalid]")) c.removeAttribute("aria-invalid");
  }

  function renderSubFormTitle() {
    $("sub-form-title").textContent = sub.editing ? t("subFormEdit", { name: sub.editing.taskName }) : t("subFormNew");
    $("sub-submit").textContent = t(sub.editing ? "subSave" : "subCreate");
    $("sub-cancel-edit").hidden = !sub.editing;
    $("sub-form").dataset.mode = sub.editing ? "edit" : "create";
  }

  // Fills the form from `from` (a task, the create form's body, or the
  // subscription `editing`) and shows it.
  function openSubForm(from, editing) {
    sub.editing = editing ? from : null;
    clearSubInvalid();
    if (!state.types.has(from.exportType)) {
      say(t("subTypeUnknown", { type: from.exportType }), "error");
      return;
    }
    $("sub-type").value = from.exportType;
    renderSubParams();
    fillSubParams(state.types.get(from.exportType), from.parameters);
    $("sub-name").value = from.taskName || "";
    for (const r of document.querySelectorAll('input[name="sub-format"]')) r.checked = r.value === (from.format || "XLSX");
    const s = editing ? from.schedule || {} : { preset: "daily", time: "09:00" };
    const preset = s.preset ? s : presetOfCron(s.cron);
    $("sub-preset").value = s.preset ? s.preset : "custom";
    $("sub-cron").value = s.cron || "";
    if (preset && preset.minute !== undefined) $("sub-minute").value = String(preset.minute);
    if (preset && preset.time) $("sub-time").value = preset.time;
    if (preset && preset.day !== undefined) $("sub-day").value = String(preset.day);
    for (const c of $("sub-days").querySelectorAll("input")) c.checked = !!(preset && (preset.days || []).includes(c.value));
    $("sub-zone").value = editing ? from.timeZone || "" : "";
    $("sub-business").checked = editing ? !!from.businessDaysOnly : false;
    const delivery = (editing && from.delivery) || {};
    $("sub-emails").value = (delivery.emails || []).join(", ");
    $("sub-attach").checked = !!delivery.attach;
    $("sub-skip-empty").checked = !!delivery.skipIfEmpty;
    showScheduleControls();
    renderSubFormTitle();
    if (sub.view !== "subs") showView("subs");
    if (!editing) say(t("subFilled", { name: from.taskName || typeTitle(from.exportType) }), "ok");
    $("sub-preset").focus();
  }

  function resetSubForm() {
    sub.editing = null;
    clearSubInvalid();
    $("sub-form").reset();
    $("sub-preset").value = "daily";
    for (const c of $("sub-days").querySelectorAll("input")) c.checked = false;
    renderSubTypeChoice();
    showScheduleControls();
    renderSubFormTitle();
  }

  // "Subscribe…" on the create form: its export, on a schedule.
  function subscribeFromCreateForm() {
    for (const c of $("create").querySelectorAll("[aria-invalid]")) c.removeAttribute("aria-invalid");
    let body;
    try { body = formBody(true); } catch (e) { return say(e.message, "error"); }
    openSubForm(body, false);
  }

  async function submitSub(ev) {
    ev.preventDefault();
    clearSubInvalid();
    const button = $("sub-submit");
    let body;
    try { body = subBody(); } catch (e) { return say(e.message, "error"); }
    const editing = sub.editing;
    button.disabled = true;
    try {
      let saved;
      if (editing) {
        body.version = editing.version;
        saved = await call("PUT", "/subscriptions/" + editing.id, body);
      } else {
        saved = await call("POST", "/subscriptions", body);
      }
      saved = saved && saved.subscription ? saved.subscription : saved;
      resetSubForm();
      say(t(editing ? "subSaved" : "subCreated", { name: saved.taskName }), "ok");
      upsertSub(saved, !editing);
      const tr = subRow(saved.id);
      if (tr) tr.querySelector("button").focus();
    } catch (e) {
      if (e.code === "409" && editing) return staleEdit(editing.id);
      showSubError(e);
    } finally {
      button.disabled = false;
    }
  }

  // PUT with a stale version: read it again and show what it is now.
  async function staleEdit(id) {
    try {
      const fresh = await call("GET", "/subscriptions/" + id);
      upsertSub(fresh, false);
      openSubForm(fresh, true);
    } catch (e) { /* gone meanwhile: the list says so */ }
    say(t("subStale"), "error");
    loadSubs();
  }

  // ---- the list ----

  let subSeq = 0;
  async function loadSubs(more, limit) {
    const seq = ++subSeq;
    const q = new URLSearchParams({ limit: String(limit || SUB_PAGE) });
    if (more && sub.nextCursor) q.set("cursor", sub.nextCursor);
    try {
      const data = await call("GET", "/subscriptions?" + q);
      if (seq !== subSeq) return;
      sub.items = more ? sub.items.concat(data.items) : data.items;
      sub.nextCursor = data.nextCursor || null;
      sub.loaded = true;
      renderSubRows();
      await readLastRuns(data.items);
    } catch (e) {
      if (seq === subSeq) say(e.message, "error");
    }
  }

  // The outcome of each one's last run: the API's lastRun when it gives one,
  // else the newest of its runs, read again only when its last run moved.
  async function readLastRuns(items) {
    const wanted = items.filter((s) => s.lastRunAt && !s.lastRun &&
      (!sub.runs.has(s.id) || sub.runsAt.get(s.id) !== s.lastRunAt));
    await Promise.all(wanted.map(async (s) => {
      try {
        sub.runs.set(s.id, newestFirst((await call("GET", "/subscriptions/" + s.id + "/runs?limit=" + HISTORY_TASKS)).items));
        sub.runsAt.set(s.id, s.lastRunAt);
      } catch (e) { /* the row shows the time only */ }
    }));
    if (wanted.length) renderSubRows();
  }

  function newestFirst(runs) {
    return (runs || []).slice().sort((a, b) => String(b.slotAt).localeCompare(String(a.slotAt)));
  }

  function subRow(id) {
    return document.querySelector('#sub-rows tr[data-id="' + id + '"]');
  }

  // A subscription changed (an action's answer, a save): its row in place.
  function upsertSub(s, isNew) {
    const i = sub.items.findIndex((x) => x.id === s.id);
    if (i >= 0) sub.items[i] = s;
    else if (isNew) sub.items.unshift(s);
    renderSubRows();
  }

  function renderSubRows() {
    const body = $("sub-rows");
    const focused = body.contains(document.activeElement)
      ? { id: document.activeElement.closest("tr").dataset.id || document.activeElement.closest("tr").dataset.historyFor,
        action: document.activeElement.dataset.action } : null;
    body.replaceChildren();
    for (const s of sub.items) {
      body.append(buildSubRow(s));
      if (sub.historyFor === s.id) body.append(historyRow(s));
    }
    $("sub-empty").hidden = !sub.loaded || sub.items.length > 0;
    $("sub-more").hidden = !sub.nextCursor;
    if (focused && focused.action) {
      const again = body.querySelector('tr[data-id="' + focused.id + '"] [data-action="' + focused.action + '"]');
      if (again) again.focus();
    }
  }

  function nextRunsCell(s) {
    const cell = el("td", { "data-label": t("subColNext"), class: "next" });
    const runs = s.state === "ACTIVE" ? (s.nextRuns && s.nextRuns.length ? s.nextRuns : s.nextRunAt ? [s.nextRunAt] : []) : [];
    if (!runs.length) {
      cell.append(el("span", { class: "note", text: t("noNextRun") }));
      return cell;
    }
    cell.append(el("ol", { class: "next-runs" }, ...runs.map((iso) => el("li", {},
      el("time", { datetime: iso, text: formatTime(iso) })))));
    return cell;
  }

  // The reason in words; the server's detail (who paused it, the last
  // failure) goes under it as the server wrote it.
  function pauseText(s) {
    if (s.state !== "PAUSED") return "";
    const key = "pause_" + (s.pauseReason || "OWNER");
    return TEXT[lang][key] ? t(key) : s.pauseReason || "";
  }

  function stateCell(s) {
    const cell = el("td", { "data-label": t("colStatus"), class: "status" },
      el("span", { class: "badge st-sub-" + String(s.state).toLowerCase(), text: TEXT[lang]["state_" + s.state] ? t("state_" + s.state) : s.state }));
    const why = pauseText(s);
    if (why) cell.append(el("div", { class: "why", "data-reason": s.pauseReason || "", text: why }));
    if (why && s.pauseDetail) cell.append(el("div", { class: "note pause-detail", text: s.pauseDetail }));
    if (Number(s.consecutiveFailures) > 0) cell.append(el("div", { class: "note", text: t("failuresInRow", { n: s.consecutiveFailures }) }));
    return cell;
  }

  function outcomeBadge(outcome) {
    return el("span", { class: "badge run-" + String(outcome).toLowerCase(), "data-outcome": outcome,
      text: TEXT[lang]["run_" + outcome] ? t("run_" + outcome) : outcome });
  }

  function lastRunCell(s) {
    const cell = el("td", { "data-label": t("subColLast"), class: "last" });
    const last = s.lastRun || (sub.runs.get(s.id) || [])[0] || null;
    const at = s.lastRunAt || (last && (last.firedAt || last.slotAt));
    if (!at) {
      cell.append(el("span", { class: "note", text: t("neverRun") }));
      return cell;
    }
    cell.append(el("time", { datetime: at, text: formatTime(at) }));
    if (last && last.outcome) cell.append(el("div", {}, outcomeBadge(last.outcome)));
    if (last && last.detail) cell.append(el("div", { class: "note", text: last.detail }));
    return cell;
  }

  function buildSubRow(s) {
    const name = s.taskName || typeTitle(s.exportType);
    const button = (label, action, fn, cls) => el("button", {
      type: "button", class: cls || null, "data-action": action, "aria-label": t(label) + " " + name,
      text: t(label), onclick: fn,
    });
    const actions = el("td", { "data-label": t("colActions"), class: "actions" });
    if (s.state === "ACTIVE") actions.append(button("pause", "pause", () => subAct("pause", s)));
    else actions.append(button("resume", "resume", () => subAct("resume", s)));
    actions.append(button("runNow", "run", () => subAct("run", s)),
      button("edit", "edit", () => openSubForm(s, true)),
      button("subDelete", "delete", () => askDelete(s)));
    const open = sub.historyFor === s.id;
    actions.append(el("button", {
      type: "button", class: "link", "data-action": "history", "aria-expanded": open ? "true" : "false",
      "aria-controls": "history-" + s.id, text: t(open ? "hideHistory" : "history"), "aria-label": t(open ? "hideHistory" : "history") + " " + name,
      onclick: () => toggleHistory(s.id),
    }));
    const zone = s.timeZone ? t("w_zone", { zone: s.timeZone }) : "";
    return el("tr", { "data-id": s.id, "data-state": s.state },
      el("td", { "data-label": t("colName"), class: "name" }, el("span", { text: name }),
        el("span", { class: "fmt", text: s.format }),
        (s.delivery && s.delivery.emails && s.delivery.emails.length)
          ? el("div", { class: "note emails", text: "✉ " + s.delivery.emails.join(", ") }) : null),
      el("td", { "data-label": t("colType"), text: typeTitle(s.exportType) }),
      el("td", { "data-label": t("subColSchedule"), class: "schedule" },
        el("span", { class: "words", text: scheduleWords(s.schedule, s.businessDaysOnly) }),
        zone ? el("div", { class: "note zone", "data-zone": s.timeZone, text: zone }) : null),
      nextRunsCell(s), stateCell(s), lastRunCell(s), actions);
  }

  async function subAct(action, s) {
    const name = s.taskName || typeTitle(s.exportType);
    try {
      const answer = await call("POST", "/subscriptions/" + s.id + "/" + action);
      if (action === "run") {
        const run = answer && answer.run ? answer.run : answer || {};
        say(run.taskId ? t("subRanTask", { name, id: run.taskId }) : t("subRan", { name }), "ok");
        sub.runs.delete(s.id);
        sub.historyFor = s.id;
        await refreshSub(s.id);
        await showHistory(s.id, 20);
        if (run.taskId) scheduleReload();
        return;
      }
      say(t(action === "pause" ? "subPaused" : "subResumed", { name }), "ok");
      if (answer && answer.id) upsertSub(answer, false);
      else await refreshSub(s.id);
    } catch (e) {
      say(e.message, "error");
      if (e.code === "404") loadSubs();
    }
  }

  async function refreshSub(id) {
    try {
      upsertSub(await call("GET", "/subscriptions/" + id), false);
    } catch (e) {
      if (e.code === "404") loadSubs();
    }
  }

  // Delete asks first, in a box above the list.
  function askDelete(s) {
    sub.deleting = s;
    renderDeleteConfirm();
    $("sub-confirm-no").focus();
  }

  function renderDeleteConfirm() {
    const s = sub.deleting;
    $("sub-confirm").hidden = !s;
    $("sub-confirm").dataset.id = s ? s.id : "";
    $("sub-confirm-text").textContent = s ? t("subConfirmDelete", { name: s.taskName || typeTitle(s.exportType) }) : "";
  }

  async function confirmDelete() {
    const s = sub.deleting;
    sub.deleting = null;
    renderDeleteConfirm();
    if (!s) return;
    try {
      await call("DELETE", "/subscriptions/" + s.id);
      say(t("subDeleted", { name: s.taskName || typeTitle(s.exportType) }), "ok");
      sub.items = sub.items.filter((x) => x.id !== s.id);
      if (sub.historyFor === s.id) sub.historyFor = null;
      if (sub.editing && sub.editing.id === s.id) resetSubForm();
      renderSubRows();
      $("subs").focus();
    } catch (e) {
      say(e.message, "error");
    }
  }

  // ---- the run history ----

  function toggleHistory(id) {
    sub.historyFor = sub.historyFor === id ? null : id;
    renderSubRows();
    if (sub.historyFor) showHistory(id, 3);
  }

  // A run just asked for, or one still CLAIMED (its task on its way), is
  // read again a few times while its history stays open.
  const HISTORY_POLL_MS = 2000;
  let historyTimer = null;

  async function showHistory(id, polls) {
    clearTimeout(historyTimer);
    try {
      const data = await call("GET", "/subscriptions/" + id + "/runs");
      sub.runs.set(id, newestFirst(data.items));
    } catch (e) {
      sub.runs.set(id, { error: e.message });
    }
    // The tasks of the newest runs, to show how each went.
    const runs = Array.isArray(sub.runs.get(id)) ? sub.runs.get(id) : [];
    const ids = runs.filter((r) => r.taskId).slice(0, HISTORY_TASKS).map((r) => String(r.taskId));
    const settled = (tid) => sub.runTasks.has(tid) &&
      !["PENDING", "RUNNING"].includes(sub.runTasks.get(tid).status);
    await Promise.all(ids.filter((tid) => !settled(tid)).map(async (tid) => {
      try { sub.runTasks.set(tid, await call("GET", "/export-tasks/" + tid)); } catch (e) { /* shown by id */ }
    }));
    if (sub.historyFor !== id) return;
    renderSubRows();
    const waiting = runs.length === 0 || runs.some((r) => r.outcome === "CLAIMED");
    if (waiting && polls > 0) {
      historyTimer = setTimeout(() => { if (sub.historyFor === id) showHistory(id, polls - 1).then(() => refreshSub(id)); },
        HISTORY_POLL_MS);
    }
  }

  function historyRow(s) {
    const runs = sub.runs.get(s.id);
    const td = el("td", { colspan: "7" }, el("h3", { text: t("history") }));
    if (runs === undefined) td.append(el("p", { class: "help", text: t("historyLoading") }));
    else if (!Array.isArray(runs)) td.append(el("p", { class: "why", text: runs.error || t("networkError") }));
    else if (!runs.length) td.append(el("p", { class: "help", text: t("historyEmpty") }));
    else {
      const head = el("tr", {}, ...["runSlot", "runFired", "runOutcome", "runTask", "runDetail"].map(
        (k) => el("th", { scope: "col", text: t(k) })));
      td.append(el("div", { class: "table-wrap" }, el("table", { class: "runs" }, el("tbody", {}, head,
        ...runs.map((r) => el("tr", { class: "run", "data-slot": r.slotAt, "data-outcome": r.outcome, "data-task": r.taskId || null },
          el("td", { "data-label": t("runSlot") }, el("time", { datetime: r.slotAt, text: formatTime(r.slotAt) })),
          el("td", { "data-label": t("runFired") }, r.firedAt ? el("time", { datetime: r.firedAt, text: formatTime(r.firedAt) }) : ""),
          el("td", { "data-label": t("runOutcome") }, outcomeBadge(r.outcome)),
          runTaskCell(r),
          el("td", { class: "note", "data-label": t("runDetail"), text: r.detail || "" })))))));
    }
    return el("tr", { class: "detail history", id: "history-" + s.id, "data-history-for": s.id }, td);
  }

  // The task a run created: its state, live, and a way to it in the list.
  function runTaskCell(r) {
    const cell = el("td", { class: "run-task", "data-label": t("runTask") });
    if (!r.taskId) return cell;
    const task = sub.runTasks.get(String(r.taskId));
    cell.append(el("span", { class: "task-id", text: "#" + r.taskId }));
    if (task) {
      const key = statusKey(task);
      cell.append(" ", el("span", { class: "badge st-" + key.toLowerCase(), "data-status": task.status, text: t("st_" + key) }),
        " ", el("button", { type: "button", class: "link", "data-action": "show-task", text: t("showTask"),
          "aria-label": t("showTask") + " " + task.taskName, onclick: () => showRunTask(task) }));
    }
    return cell;
  }

  // Shows a run's task where a created one shows: above the task list, live.
  function showRunTask(task) {
    state.created = sub.runTasks.get(String(task.id)) || task;
    renderCreated();
    showView("exports");
    const tr = $("created").querySelector("tr[data-id]");
    if (tr) (tr.querySelector("button") || tr).focus();
  }

  // A task event: the run histories show their tasks' states live.
  function subTaskChanged(task) {
    if (!sub.runTasks.has(String(task.id))) return;
    sub.runTasks.set(String(task.id), task);
    if (sub.historyFor && !$("subs-view").hidden) renderSubRows();
  }

  function renderSubs() {
    renderViews();
    if (state.types.size) {
      const values = subParamValues();
      renderSubParams();
      restoreSubParamValues(values);
    }
    renderSchedule();
    renderSubFormTitle();
    renderDeleteConfirm();
    renderSubRows();
  }

  // Subscriptions switched off on this server (subscriptions.enabled: false,
  // the routes answer 404): no view, no "subscribe" buttons.
  async function detectSubscriptions() {
    try {
      await call("GET", "/subscriptions?limit=1");
    } catch (e) {
      if (e.code !== "404") return;
      document.body.dataset.subscriptions = "off";
      $("views").hidden = true;
      if (sub.view === "subs") showView("exports");
    }
  }

  function initSubs() {
    $("views").addEventListener("keydown", onViewKey);
    for (const tab of $("views").querySelectorAll('[role="tab"]')) {
      tab.addEventListener("click", () => showView(tab.dataset.view));
    }
    $("create-subscribe").addEventListener("click", subscribeFromCreateForm);
    $("sub-type").addEventListener("change", () => { renderSubParams(); clearSubInvalid(); });
    $("sub-preset").addEventListener("change", onPresetChange);
    $("sub-form").addEventListener("input", renderScheduleWords);
    $("sub-form").addEventListener("change", renderScheduleWords);
    $("sub-form").addEventListener("submit", submitSub);
    $("sub-cancel-edit").addEventListener("click", () => { resetSubForm(); say(""); });
    $("sub-confirm-yes").addEventListener("click", confirmDelete);
    $("sub-confirm-no").addEventListener("click", () => { sub.deleting = null; renderDeleteConfirm(); });
    $("sub-more").addEventListener("click", () => loadSubs(true));
    // The zones this browser knows, offered as the field is typed; the server
    // decides (an unknown one is refused by name).
    const zones = typeof Intl.supportedValuesOf === "function" ? Intl.supportedValuesOf("timeZone") : [];
    $("sub-zones").replaceChildren(...zones.map((z) => el("option", { value: z })));
    renderSchedule();
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
    await Promise.all([opSearch(), loadAudit(), loadStats(), loadHealth(), loadOpSubs()]);
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

  // ---- the console's subscriptions ----
  // Every subscription of the operator's scope (GET /operator/subscriptions),
  // by tenant and state, each paused or resumed from its row.

  const opSub = { items: [], nextCursor: null, loaded: false };

  function ownerOf(s) {
    const o = s.owner;
    if (o && typeof o === "object") return o.user || o.userId || o.requestedBy || "";
    return o || "";
  }

  function tenantOf(s) {
    return s.tenantId || (s.owner && typeof s.owner === "object" ? s.owner.tenantId || "" : "");
  }

  async function loadOpSubs(more) {
    const q = new URLSearchParams({ limit: "50" });
    const tenant = $("op-sub-tenant").value.trim();
    if (tenant) q.set("tenant", tenant);
    if ($("op-sub-state").value) q.set("state", $("op-sub-state").value);
    if (more && opSub.nextCursor) q.set("cursor", opSub.nextCursor);
    try {
      const data = await call("GET", "/operator/subscriptions?" + q);
      opSub.items = more ? opSub.items.concat(data.items) : data.items;
      opSub.nextCursor = data.nextCursor || null;
    } catch (e) {
      if (!more) opSub.items = [];
      opSub.nextCursor = null;
      // Subscriptions switched off (subscriptions.enabled: false): no section.
      if (e.code === "404") $("op-subs").hidden = true;
      else opSay(e.message, "error");
    }
    opSub.loaded = true;
    renderOpSubs();
  }

  function renderOpSubState() {
    const select = $("op-sub-state");
    const chosen = select.value;
    select.replaceChildren(...["", "ACTIVE", "PAUSED"].map((s) =>
      el("option", { value: s, text: s ? t("state_" + s) : t("opAnyState") })));
    select.value = chosen;
  }

  function renderOpSubs() {
    $("op-sub-rows").replaceChildren(...opSub.items.map((s) => {
      const next = s.state === "ACTIVE" ? (s.nextRuns && s.nextRuns[0]) || s.nextRunAt : null;
      const action = s.state === "ACTIVE" ? "pause" : "resume";
      return el("tr", { "data-id": s.id, "data-state": s.state },
        el("td", { class: "id", text: s.id + (s.taskName ? " · " + s.taskName : "") }),
        el("td", { class: "tenant", text: tenantOf(s) }),
        el("td", { class: "user", text: ownerOf(s) }),
        el("td", { text: s.exportType }),
        el("td", {}, el("span", { text: scheduleWords(s.schedule, s.businessDaysOnly) }),
          s.timeZone ? el("div", { class: "note", text: t("w_zone", { zone: s.timeZone }) }) : null),
        stateCell(s),
        el("td", {}, next ? el("time", { datetime: next, text: formatTime(next) }) : t("noNextRun")),
        el("td", {}, s.lastRunAt ? el("time", { datetime: s.lastRunAt, text: formatTime(s.lastRunAt) }) : t("neverRun")),
        el("td", { class: "actions" }, el("button", {
          type: "button", "data-action": action, text: t(action), "aria-label": t(action) + " " + s.id,
          onclick: () => opSubAct(action, s),
        })));
    }));
    $("op-sub-empty").hidden = !opSub.loaded || opSub.items.length > 0;
    $("op-sub-more").hidden = !opSub.nextCursor;
  }

  async function opSubAct(action, s) {
    try {
      const answer = await call("POST", "/operator/subscriptions/" + s.id + "/" + action);
      opSay(t(action === "pause" ? "opSubPaused" : "opSubResumed", { id: s.id }), "ok");
      const fresh = answer && answer.subscription ? answer.subscription : answer;
      if (fresh && fresh.id) {
        opSub.items = opSub.items.map((x) => (x.id === fresh.id ? fresh : x));
        renderOpSubs();
      } else {
        await loadOpSubs();
      }
      const again = $("op-sub-rows").querySelector('tr[data-id="' + s.id + '"] button');
      if (again) again.focus();
    } catch (e) {
      opSay(e.message, "error");
    }
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
    renderOpSubState();
    renderOpSubs();
  }

  function initConsole() {
    $("view-toggle").addEventListener("click", () => showConsole(!op.shown));
    $("op-search").addEventListener("submit", (ev) => { ev.preventDefault(); opSearch(); });
    for (const id of ["op-bulk-retry", "op-bulk-cancel"]) {
      $(id).addEventListener("click", () => countBulk($(id).dataset.bulk));
    }
    $("op-confirm-yes").addEventListener("click", confirmBulk);
    $("op-confirm-no").addEventListener("click", () => { op.pending = null; renderBulk(); });
    $("op-sub-search").addEventListener("submit", (ev) => { ev.preventDefault(); opSay(""); loadOpSubs(); });
    $("op-sub-more").addEventListener("click", () => loadOpSubs(true));
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
    renderSubs();
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
    renderSubTypeChoice();
    renderTabs();
    await loadTasks();
    startLive();
    await Promise.all([detectOperator(), detectSubscriptions()]);
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
    initSubs();
    initConsole();
    setInterval(tick, 1000);
    if (token()) enter(); else showSignIn();
  }

  init();
})();
