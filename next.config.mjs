/** @type {import('next').NextConfig} */
const nextConfig = {
  // Loaded from node_modules at run time: PGlite ships wasm, and rate-limiter-flexible imports
  // drizzle-orm dynamically, which must be the same copy the app uses.
  serverExternalPackages: ["@electric-sql/pglite", "postgres", "drizzle-orm", "rate-limiter-flexible"],
  poweredByHeader: false,
  typescript: { ignoreBuildErrors: false },
};

export default nextConfig;
