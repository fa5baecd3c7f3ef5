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
