import { redirect } from "next/navigation";
import type { ReactNode } from "react";
import { getSession } from "@/server/auth/next-auth";
import { RoleProvider } from "./role-context";
import { Sidebar } from "./sidebar";

export const dynamic = "force-dynamic";

/**
 * The signed-in shell. The redirect is for the person at the browser; the data itself is guarded
 * by the tRPC procedures, which check the session on every call.
 */
export default async function DashboardLayout({ children }: { children: ReactNode }) {
  const session = await getSession();
  if (!session?.user?.tenantId) redirect("/login");
  return (
    <RoleProvider value={{ userId: session.user.id, role: session.user.role }}>
      <div className="shell">
        <Sidebar userName={session.user.name} userEmail={session.user.email} />
        <main className="content">{children}</main>
      </div>
    </RoleProvider>
  );
}
