import type { Metadata } from "next";
import { getSession } from "@/server/auth/next-auth";
import { AuthCard } from "../../_components/auth-card";
import { Invitation } from "./invitation";

export const metadata: Metadata = { title: "Convite" };
export const dynamic = "force-dynamic";

/** /convite/{token} (docs/team.md#invitations): sign up, or sign in, and join the account with the invited role. */
export default async function InvitationPage({ params }: { params: Promise<{ token: string }> }) {
  const { token } = await params;
  const session = await getSession();
  return (
    <AuthCard title="Convite para uma equipe">
      <Invitation token={token} signedInAs={session?.user?.email} />
    </AuthCard>
  );
}
