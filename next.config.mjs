/** @type {import('next').NextConfig} */
const nextConfig = {
  // Loaded from node_modules at run time: PGlite ships wasm, and rate-limiter-flexible imports
  // drizzle-orm dynamically, which must be the same copy the app uses.
  serverExternalPackages: ["@electric-sql/pglite", "postgres", "drizzle-orm", "rate-limiter-flexible"],
  poweredByHeader: false,
  typescript: { ignoreBuildErrors: false },
  // The consent page must never be framed (clickjacking an "Autorizar" click).
  async headers() {
    return [
      {
        source: "/oauth/authorize",
        headers: [
          { key: "Content-Security-Policy", value: "frame-ancestors 'none'" },
          { key: "X-Frame-Options", value: "DENY" },
          { key: "Cache-Control", value: "no-store" },
        ],
      },
    ];
  },
};

export default nextConfig;
