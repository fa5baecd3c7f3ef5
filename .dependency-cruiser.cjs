/**
 * The architecture's import rules (docs/architecture.md, "Layering"), checked by `npm test` (the "lint
 * and architecture" stage) and alone by `npm run lint:arch`. Tests and test fixtures are not held to them.
 * @type {import('dependency-cruiser').IConfiguration}
 */
const domains = "(channels|segments|campaigns|settings|webhooks|integrations|partner|oauth|keys|auth|dispatch|launches|groups|numbers|overview)";

module.exports = {
  forbidden: [
    {
      name: "messaging-imports-no-domain",
      comment: "server/messaging is the provider interface: it knows no domain folder and no HTTP plumbing.",
      severity: "error",
      from: { path: "^server/messaging/" },
      to: { path: [`^server/${domains}/`, "^server/http/"] },
    },
    {
      name: "http-imports-no-domain",
      comment: "server/http is HTTP but not domain (envelope, idempotency, rate limits): it gets what it needs injected.",
      severity: "error",
      from: { path: "^server/http/" },
      to: { path: `^server/${domains}/` },
    },
    {
      name: "http-imports-no-router",
      comment:
        "server/http serves the app router it is handed (RestDeps.router, from server/rest-api.ts): server/root.ts and the composition around it import every domain.",
      severity: "error",
      from: { path: "^server/http/" },
      to: { path: "^server/(root|services|rest-api|openapi|resolve-caller)\\.ts$" },
    },
    {
      name: "launch-imports-no-link-or-funnel",
      comment:
        "server/launches/launch/ (a launch's record and schema, its groups' rotation and the engine that makes them) is what the link and the funnel build on: it imports neither, nor the domain's surface (server/launches/*.ts).",
      severity: "error",
      from: { path: "^server/launches/launch/" },
      to: { path: ["^server/launches/(link|funnel)/", "^server/launches/[^/]+$"] },
    },
    {
      name: "link-imports-no-funnel",
      comment: "server/launches/link/ (the join link, its clicks, the invites it sends people to) is read by the funnel's figures, never the reverse.",
      severity: "error",
      from: { path: "^server/launches/link/" },
      to: { path: ["^server/launches/funnel/", "^server/launches/[^/]+$"] },
    },
    {
      name: "launches-surface-on-top",
      comment:
        "server/launches/*.ts (the router and the create, edit and info of a launch, which span the link, the funnel and the launch) sit above the launches' and the groups' folders: none of them imports it.",
      severity: "error",
      from: { path: ["^server/launches/[^/]+/", "^server/groups/"] },
      to: { path: "^server/launches/[^/]+$" },
    },
    {
      name: "groups-import-no-link",
      comment:
        "server/groups/ (what the service knows about a group: its members, its activity, the actions on it) is used by launches, campaigns and moderation; of launches it reads the launch itself (launch/) and its buyers (funnel/), never the link.",
      severity: "error",
      from: { path: "^server/groups/" },
      to: { path: "^server/launches/link/" },
    },
    {
      name: "group-members-import-no-actions",
      comment:
        "server/groups/members/ and server/groups/activity/ (a group's participants, the LID ⇄ phone map, member counts, the group_activity events) sit below the group actions, which read them; group-activity imports no domain folder.",
      severity: "error",
      from: { path: "^server/groups/(members|activity)/" },
      to: { path: ["^server/groups/actions/", "^server/launches/funnel/"] },
    },
    {
      name: "group-activity-imports-no-domain",
      comment: "server/groups/activity/ writes group_activity events to the outbox: the launches, the members and the actions all record through it.",
      severity: "error",
      from: { path: "^server/groups/activity/" },
      to: { path: `^server/(?!webhooks/events\\.ts$)${domains}/` },
    },
    {
      name: "dispatch-imports-no-engine-or-page",
      comment: "server/dispatch is engine-agnostic: Inngest and the embedded runner call it, never the reverse.",
      severity: "error",
      from: { path: "^server/dispatch/" },
      to: { path: ["^inngest/", "^app/"] },
    },
    {
      name: "engines-run-no-sql",
      comment: "inngest/ (Inngest functions, the embedded runners) calls server/ operations; queries live there.",
      severity: "error",
      from: { path: "^inngest/" },
      to: { path: ["^db/(?!client\\.ts$)", "^node_modules/drizzle-orm/"], dependencyTypesNot: ["type-only"] },
    },
    {
      name: "db-imports-nothing-above",
      comment: "db/ is the bottom layer.",
      severity: "error",
      from: { path: "^db/" },
      to: { path: ["^server/", "^app/", "^inngest/"] },
    },
    {
      name: "server-imports-no-app",
      comment: "A domain operation never imports from app/ (pages and route handlers sit above it).",
      severity: "error",
      from: { path: "^server/" },
      to: { path: "^app/" },
    },
    {
      name: "e2e-imports-no-scripts",
      comment: "The e2e harness and scripts/ (which runs it) share what both need through boot/, never each other's files the other way.",
      severity: "error",
      from: { path: "^e2e/" },
      to: { path: "^scripts/" },
    },
    {
      name: "boot-imports-no-harness",
      comment: "boot/ (how the server process is started) is shared by scripts/ and e2e/: it imports neither, nor the tests.",
      severity: "error",
      from: { path: "^boot/" },
      to: { path: "^(scripts|e2e|test|bench)/" },
    },
    {
      name: "no-circular",
      comment: "No module reaches itself through its imports.",
      severity: "error",
      from: {},
      to: { circular: true },
    },
    {
      name: "no-circular-between-folders",
      comment: "No folder reaches itself through its files' imports (e.g. dispatch → campaigns → dispatch).",
      severity: "error",
      scope: "folder",
      from: {},
      to: { circular: true },
    },
  ],
  options: {
    // Tests, their fixtures and the bench harness may reach anywhere; e2e/ is held to e2e-imports-no-scripts and no cycles.
    exclude: { path: ["\\.test\\.tsx?$", "^test/", "^bench/"] },
    doNotFollow: { path: "node_modules" },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: "tsconfig.json" },
    enhancedResolveOptions: {
      exportsFields: ["exports"],
      conditionNames: ["import", "require", "node", "default"],
      extensions: [".ts", ".tsx", ".js", ".mjs", ".cjs"],
    },
    reporterOptions: { text: { highlightFocused: true } },
  },
};
