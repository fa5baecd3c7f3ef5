/** @type {import('next').NextConfig} */
const nextConfig = {
  // Loaded from node_modules at run time: PGlite ships wasm, and rate-limiter-flexible imports
  // drizzle-orm dynamically, which must be the same copy the app uses.
  serverExternalPackages: ["@electric-sql/pglite", "postgres", "drizzle-orm", "rate-limiter-flexible"],
  poweredByHeader: false,
  // Type errors fail the build, unless `npm test` has just checked these very sources with tsc (the same tsconfig.json,
  // the route types generated first): scripts/ensure-build.ts sets GCS_SKIP_BUILD_TYPECHECK only then.
  typescript: { ignoreBuildErrors: process.env.GCS_SKIP_BUILD_TYPECHECK === "1" },
  // Security headers (CSP frame-ancestors 'none', nosniff, Referrer-Policy, HSTS) are set for every
  // page and API answer by the production server, server/http/security-headers.ts.
  async headers() {
    return [{ source: "/oauth/authorize", headers: [{ key: "Cache-Control", value: "no-store" }] }];
  },
};

export default nextConfig;
