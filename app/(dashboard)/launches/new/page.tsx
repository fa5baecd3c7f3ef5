import type { Metadata } from "next";
import { NewLaunch } from "./new-launch";

export const metadata: Metadata = { title: "Novo lançamento" };

export default function NewLaunchPage() {
  return <NewLaunch />;
}
