import type { Metadata } from "next";
import { ActionDetail } from "./action-detail";

export const metadata: Metadata = { title: "Ação nos grupos" };

export default async function GroupActionPage({ params }: { params: Promise<{ id: string }> }) {
  const { id } = await params;
  return <ActionDetail id={decodeURIComponent(id)} />;
}
