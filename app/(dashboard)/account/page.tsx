import type { Metadata } from "next";
import { PasswordForm } from "./password-form";

export const metadata: Metadata = { title: "Conta" };

export default function AccountPage() {
  return <PasswordForm />;
}
