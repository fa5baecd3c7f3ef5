import type { Metadata } from "next";
import { LaunchDetail } from "./launch-detail";

export const metadata: Metadata = { title: "Lançamento" };

export default async function LaunchPage({ params }: { params: Promise<{ id: string }> }) {
  const { id } = await params;
  return <LaunchDetail id={decodeURIComponent(id)} />;
}
