/** Runs once when the Next.js server starts: open and migrate the database, wire the provider. */
export async function register() {
  if (process.env.NEXT_RUNTIME !== "nodejs") return;
  const { getServices } = await import("./server/services");
  await getServices();
}
