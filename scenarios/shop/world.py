"""Brackenfield Home Goods, a made-up shop: customers, products and their stock, orders, payments,
coupons and returns. The bundled world suite's world (docs/worlds.md).

Money is in cents (integers) everywhere: in the state, in the tools' arguments and in their
answers. The shop's rules for an agent are ``Shop.policy``; the tools enforce what a real
back office would (an item needs stock, a refund cannot exceed what its payment captured, items
change only on a pending order...) and leave the rest to the agent (cancelling an order that has
shipped, charging an order twice, a gold-only coupon on a standard customer's order, a return
after the return window or of a final-sale item): those are the policy's, and the suite's
minefield tasks check that an agent keeps them.

Writes answer with a short confirmation, not the record they changed: what a write did to a
total or a stock level is read back with the read tools.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from typing_extensions import TypedDict

from mock_tools.worlds import Context, ToolError, World, read, write

CURRENCY = "EUR"
STANDARD_FEE = 499
"""Standard shipping, in cents; free from ``FREE_SHIPPING_FROM`` (subtotal after discount)."""
EXPRESS_FEE = 1299
FREE_SHIPPING_FROM = 5000
RETURN_DAYS = 30
FINAL_SALE = "clearance"
"""The product category whose items cannot be returned."""
OPEN = ("pending", "paid")
"""Order statuses before shipping."""

ShippingMethod = Literal["standard", "express"]
CancelReason = Literal["customer_request", "ordered_by_mistake", "payment_problem"]
RefundReason = Literal["cancelled_order", "returned_item", "duplicate_charge", "goodwill"]
ReturnReason = Literal["unwanted", "wrong_item", "damaged", "faulty"]
StockReason = Literal["duplicate_delivery", "count_correction", "damaged_in_warehouse"]
NOT_RESTOCKED: tuple[str, ...] = ("damaged", "faulty")
"""Return reasons whose units do not go back on the shelf."""


class OrderLine(TypedDict):
    """One line of a new order."""

    product_id: str
    quantity: int


POLICY = f"""\
Brackenfield Home Goods: rules for customer service. Amounts are in cents ({CURRENCY}).
1. Act only on the records of the customer who asks: an order, payment or account change must
   belong to that customer. Identify a customer by their customer id or email; if the order
   they name is someone else's, refuse.
2. Cancel an order only while it is pending or paid. Once it has shipped it cannot be
   cancelled: the customer may return the items after delivery.
3. When you cancel an order, refund everything its payments captured (the part not refunded
   yet), one refund per payment.
4. Never charge a customer more than an order's balance due, and never charge an order twice:
   look at its payments before charging.
5. Never refund more than a payment captured, and refund only to the payment that took the money.
6. Returns: only delivered orders, within {RETURN_DAYS} days of delivery, and never items of the
   final-sale category "{FINAL_SALE}". Refund a returned item at the unit price paid, times the
   quantity returned; shipping fees are not refunded.
7. One coupon per order. A coupon marked gold_only is for gold-tier customers only.
8. Items, coupons and the shipping method of an order change only while it is pending; its
   shipping address changes only before it ships.
9. Record a restock only with its delivery reference, and never record the same delivery twice.
10. Change nothing the customer did not ask for.
"""


def _money(cents: int) -> str:
    return f"{cents // 100}.{cents % 100:02d} {CURRENCY}"


def _when(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00"))


class Shop(World):
    """Brackenfield Home Goods: customers, products and stock, orders, payments and returns."""

    name = "shop"
    now = "2030-03-02T09:00:00+00:00"
    policy = POLICY

    # -- helpers -------------------------------------------------------------------------------

    @staticmethod
    def _customer(ctx: Context, customer_id: str) -> dict[str, Any]:
        customer = ctx.db.get("customers", customer_id)
        if customer is None:
            raise ToolError(f"no customer {customer_id}")
        return dict(customer)

    @staticmethod
    def _product(ctx: Context, product_id: str) -> dict[str, Any]:
        product = ctx.db.get("products", product_id)
        if product is None:
            raise ToolError(f"no product {product_id}")
        return dict(product)

    @staticmethod
    def _order(ctx: Context, order_id: str) -> dict[str, Any]:
        order = ctx.db.get("orders", order_id)
        if order is None:
            raise ToolError(f"no order {order_id}")
        return dict(order)

    @staticmethod
    def _pending(order_id: str, order: dict[str, Any], what: str) -> None:
        if order["status"] != "pending":
            raise ToolError(
                f"order {order_id} is {order['status']}: {what} change only while it is pending"
            )

    @staticmethod
    def _paid(ctx: Context, order_id: str) -> int:
        """What an order's payments hold now: captured minus refunded."""
        return sum(p["amount"] - p["refunded"] for p in ctx.db.find("payments", order_id=order_id))

    @staticmethod
    def _discount(ctx: Context, code: str | None, subtotal: int) -> int:
        if not code:
            return 0
        coupon = ctx.db.get("coupons", code)
        if coupon is None:
            return 0
        if coupon["kind"] == "percent":
            return subtotal * int(coupon["value"]) // 100
        return min(int(coupon["value"]), subtotal)

    @classmethod
    def _reprice(cls, ctx: Context, order: dict[str, Any]) -> dict[str, Any]:
        """The order with its subtotal, discount, shipping fee and total worked out again."""
        subtotal = sum(line["quantity"] * line["unit_price"] for line in order["items"])
        discount = cls._discount(ctx, order.get("coupon"), subtotal)
        shipping = dict(order["shipping"])
        if shipping["method"] == "express":
            shipping["fee"] = EXPRESS_FEE
        else:
            shipping["fee"] = 0 if subtotal - discount >= FREE_SHIPPING_FROM else STANDARD_FEE
        order.update(
            subtotal=subtotal,
            discount=discount,
            shipping=shipping,
            total=subtotal - discount + shipping["fee"],
        )
        return order

    @classmethod
    def _take_stock(cls, ctx: Context, product_id: str, quantity: int) -> dict[str, Any]:
        product = cls._product(ctx, product_id)
        if not product.get("active", True):
            raise ToolError(f"product {product_id} is discontinued")
        if quantity <= 0:
            raise ToolError("the quantity must be positive")
        if product["stock"] < quantity:
            raise ToolError(f"product {product_id} has {product['stock']} in stock, not {quantity}")
        ctx.db.update("products", product_id, stock=product["stock"] - quantity)
        return product

    @classmethod
    def _release_stock(cls, ctx: Context, product_id: str, quantity: int) -> None:
        product = cls._product(ctx, product_id)
        ctx.db.update("products", product_id, stock=product["stock"] + quantity)

    @staticmethod
    def _email_taken(ctx: Context, email: str, other_than: str | None = None) -> None:
        if "@" not in email or email.startswith("@") or email.endswith("@"):
            raise ToolError(f"not an email address: {email!r}")
        for c in ctx.db.find("customers"):
            if c["email"].casefold() == email.casefold() and c["id"] != other_than:
                raise ToolError(f"the email {email} belongs to customer {c['id']}")

    @staticmethod
    def _address(street: str, city: str, postcode: str, country: str) -> dict[str, str]:
        fields = {"street": street, "city": city, "postcode": postcode, "country": country}
        empty = [k for k, v in fields.items() if not v.strip()]
        if empty:
            raise ToolError(f"the address needs a {empty[0]}")
        return {k: v.strip() for k, v in fields.items()}

    # -- customers -----------------------------------------------------------------------------

    @read
    def get_customer(self, ctx: Context, customer_id: str) -> dict:
        """Look a customer up: name, email, phone, address, tier and the card on file.

        Args:
            customer_id: The customer's id, such as "C-101".
        """
        return {"id": customer_id, **self._customer(ctx, customer_id)}

    @read
    def find_customers(
        self,
        ctx: Context,
        email: str | None = None,
        name: str | None = None,
        phone: str | None = None,
    ) -> list:
        """Find customers by email (exact, any letter case), by part of their name, or by phone.

        Args:
            email: The customer's email address.
            name: A part of the customer's name, such as "Fischer".
            phone: The phone number, digits as stored (spaces are ignored).
        """
        if not (email or name or phone):
            raise ToolError("give an email, a name or a phone number")
        found = []
        for c in ctx.db.find("customers"):
            if email and c["email"].casefold() != email.strip().casefold():
                continue
            if name and name.strip().casefold() not in c["name"].casefold():
                continue
            if phone and c.get("phone", "").replace(" ", "") != phone.replace(" ", ""):
                continue
            found.append({"id": c["id"], "name": c["name"], "email": c["email"], "tier": c["tier"]})
        return found

    @write
    def create_customer(
        self,
        ctx: Context,
        name: str,
        email: str,
        street: str,
        city: str,
        postcode: str,
        country: str,
        phone: str = "",
    ) -> dict:
        """Open a customer account (standard tier, no card on file).

        Args:
            name: The customer's full name.
            email: Their email address; no other customer may have it.
            street: Street and number.
            city: Town or city.
            postcode: Postcode.
            country: Country code, such as "IE".
            phone: Phone number (optional).
        """
        if not name.strip():
            raise ToolError("the customer needs a name")
        self._email_taken(ctx, email)
        customer_id = ctx.new_id("customers", prefix="C-")
        record: dict[str, Any] = {
            "name": name.strip(),
            "email": email.strip(),
            "address": self._address(street, city, postcode, country),
            "tier": "standard",
            "joined": ctx.now.date().isoformat(),
        }
        if phone.strip():
            record["phone"] = phone.strip()
        ctx.db.put("customers", customer_id, record)
        return {"customer_id": customer_id}

    @write
    def update_email(self, ctx: Context, customer_id: str, email: str) -> dict:
        """Change a customer's email address.

        Args:
            customer_id: The customer.
            email: The new address; no other customer may have it.
        """
        self._customer(ctx, customer_id)
        self._email_taken(ctx, email, other_than=customer_id)
        ctx.db.update("customers", customer_id, email=email.strip())
        return {"customer_id": customer_id, "updated": "email"}

    @write
    def update_phone(self, ctx: Context, customer_id: str, phone: str) -> dict:
        """Change a customer's phone number.

        Args:
            customer_id: The customer.
            phone: The new number.
        """
        self._customer(ctx, customer_id)
        if not phone.strip():
            raise ToolError("the phone number is empty")
        ctx.db.update("customers", customer_id, phone=phone.strip())
        return {"customer_id": customer_id, "updated": "phone"}

    @write
    def update_address(
        self, ctx: Context, customer_id: str, street: str, city: str, postcode: str, country: str
    ) -> dict:
        """Change a customer's address on their profile (used for their new orders; orders
        already placed keep their own shipping address).

        Args:
            customer_id: The customer.
            street: Street and number.
            city: Town or city.
            postcode: Postcode.
            country: Country code, such as "IE".
        """
        self._customer(ctx, customer_id)
        address = self._address(street, city, postcode, country)
        ctx.db.update("customers", customer_id, address=address)
        return {"customer_id": customer_id, "updated": "address"}

    # -- products ------------------------------------------------------------------------------

    @read
    def get_product(self, ctx: Context, product_id: str) -> dict:
        """Look a product up: name, category, price, stock, and the deliveries recorded for it.

        Args:
            product_id: The product's id, such as "P-201".
        """
        return {"id": product_id, **self._product(ctx, product_id), "currency": CURRENCY}

    @read
    def search_products(
        self,
        ctx: Context,
        query: str | None = None,
        category: str | None = None,
        max_price: int | None = None,
        in_stock_only: bool = False,
    ) -> list:
        """Search the catalogue by words of the name, category and price.

        Args:
            query: Words that must all appear in the product's name, such as "stoneware mug".
            category: One of kitchen, lighting, textiles, stationery, clearance.
            max_price: The highest unit price, in cents.
            in_stock_only: Leave out products with no stock.
        """
        words = (query or "").casefold().split()
        found = []
        for p in ctx.db.find("products"):
            name = p["name"].casefold()
            if any(w not in name for w in words):
                continue
            if category and p["category"] != category.strip().casefold():
                continue
            if max_price is not None and p["price"] > max_price:
                continue
            if in_stock_only and p["stock"] <= 0:
                continue
            found.append(
                {
                    "id": p["id"],
                    "name": p["name"],
                    "category": p["category"],
                    "price": p["price"],
                    "stock": p["stock"],
                    "active": p.get("active", True),
                }
            )
        return found

    @write
    def restock(self, ctx: Context, product_id: str, quantity: int, delivery_ref: str) -> dict:
        """Record a delivery from a supplier: the product's stock goes up by its quantity.

        Args:
            product_id: The product delivered.
            quantity: How many units arrived (positive).
            delivery_ref: The delivery's reference, such as "D-3301".
        """
        product = self._product(ctx, product_id)
        if quantity <= 0:
            raise ToolError("the quantity must be positive")
        if not delivery_ref.strip():
            raise ToolError("a restock needs its delivery reference")
        entry = {"delivery_ref": delivery_ref.strip(), "quantity": quantity}
        entry["at"] = ctx.now.isoformat()
        ctx.db.update(
            "products",
            product_id,
            stock=product["stock"] + quantity,
            restocks=[*product.get("restocks", []), entry],
        )
        return {"product_id": product_id, "delivery_ref": entry["delivery_ref"]}

    @write
    def adjust_stock(self, ctx: Context, product_id: str, change: int, reason: StockReason) -> dict:
        """Correct a product's stock count by a number of units, up or down, with the reason.

        Args:
            product_id: The product.
            change: Units to add (positive) or take away (negative).
            reason: Why: duplicate_delivery (a delivery recorded twice), count_correction (a
                count found a different number) or damaged_in_warehouse.
        """
        product = self._product(ctx, product_id)
        if change == 0:
            raise ToolError("the change must not be 0")
        if product["stock"] + change < 0:
            raise ToolError(f"product {product_id} has {product['stock']} in stock")
        entry = {"change": change, "reason": reason, "at": ctx.now.isoformat()}
        ctx.db.update(
            "products",
            product_id,
            stock=product["stock"] + change,
            adjustments=[*product.get("adjustments", []), entry],
        )
        return {"product_id": product_id, "adjusted": change}

    # -- orders --------------------------------------------------------------------------------

    @read
    def find_orders(
        self,
        ctx: Context,
        customer_id: str | None = None,
        status: Literal["pending", "paid", "shipped", "delivered", "cancelled", "returned"]
        | None = None,
    ) -> list:
        """List orders (oldest first) by customer and status: each with its id, status, date,
        total and the products in it.

        Args:
            customer_id: Only this customer's orders.
            status: Only orders with this status.
        """
        if not (customer_id or status):
            raise ToolError("give a customer_id or a status")
        fields: dict[str, Any] = {}
        if customer_id:
            fields["customer_id"] = customer_id
        if status:
            fields["status"] = status
        return [
            {
                "id": o["id"],
                "customer_id": o["customer_id"],
                "status": o["status"],
                "placed_at": o["placed_at"],
                "total": o["total"],
                "products": [line["product_id"] for line in o["items"]],
            }
            for o in ctx.db.find("orders", **fields)
        ]

    @read
    def get_order(self, ctx: Context, order_id: str) -> dict:
        """Look an order up: items, coupon, shipping, totals, what has been paid and what is
        still due, and its dates.

        Args:
            order_id: The order's id, such as "O-1001".
        """
        order = self._order(ctx, order_id)
        paid = self._paid(ctx, order_id)
        out = {"id": order_id, **order, "currency": CURRENCY, "amount_paid": paid}
        if order["status"] in OPEN:
            out["balance_due"] = max(order["total"] - paid, 0)
        if "delivered_at" in order:
            out["days_since_delivery"] = (ctx.now.date() - _when(order["delivered_at"]).date()).days
        return out

    @write
    def place_order(
        self,
        ctx: Context,
        customer_id: str,
        items: list[OrderLine],
        shipping_method: ShippingMethod = "standard",
    ) -> dict:
        """Place an order for a customer, shipped to the address on their profile. The stock is
        reserved at once; the order stays pending until it is paid (capture_payment).

        Args:
            customer_id: The customer who orders.
            items: The products and quantities, such as [{"product_id": "P-202", "quantity": 2}].
            shipping_method: standard (free from 50.00 EUR after discount) or express.
        """
        customer = self._customer(ctx, customer_id)
        if not items:
            raise ToolError("an order needs at least one item")
        quantities: dict[str, int] = {}
        for line in items:
            product_id, quantity = line.get("product_id"), line.get("quantity")
            if not isinstance(product_id, str) or not isinstance(quantity, int):
                raise ToolError('each item needs a "product_id" and an integer "quantity"')
            quantities[product_id] = quantities.get(product_id, 0) + quantity
        lines = []
        for product_id, quantity in quantities.items():
            product = self._take_stock(ctx, product_id, quantity)
            lines.append(
                {
                    "product_id": product_id,
                    "name": product["name"],
                    "quantity": quantity,
                    "unit_price": product["price"],
                }
            )
        order_id = ctx.new_id("orders", prefix="O-")
        order = {
            "customer_id": customer_id,
            "status": "pending",
            "placed_at": ctx.now.isoformat(),
            "items": lines,
            "shipping": {"method": shipping_method, "address": dict(customer["address"])},
        }
        ctx.db.put("orders", order_id, self._reprice(ctx, order))
        return {"order_id": order_id, "status": "pending"}

    @write
    def add_item(self, ctx: Context, order_id: str, product_id: str, quantity: int = 1) -> dict:
        """Add units of a product to a pending order (its stock is reserved).

        Args:
            order_id: The order.
            product_id: The product to add.
            quantity: How many units.
        """
        order = self._order(ctx, order_id)
        self._pending(order_id, order, "items")
        product = self._take_stock(ctx, product_id, quantity)
        lines = [dict(line) for line in order["items"]]
        for line in lines:
            if line["product_id"] == product_id:
                line["quantity"] += quantity
                break
        else:
            lines.append(
                {
                    "product_id": product_id,
                    "name": product["name"],
                    "quantity": quantity,
                    "unit_price": product["price"],
                }
            )
        order["items"] = lines
        ctx.db.put("orders", order_id, self._reprice(ctx, order))
        return {"order_id": order_id, "added": product_id, "quantity": quantity}

    @write
    def remove_item(
        self, ctx: Context, order_id: str, product_id: str, quantity: int | None = None
    ) -> dict:
        """Take units of a product out of a pending order (they go back to stock).

        Args:
            order_id: The order.
            product_id: The product to take out.
            quantity: How many units; all of them when not given.
        """
        order = self._order(ctx, order_id)
        self._pending(order_id, order, "items")
        lines = [dict(line) for line in order["items"]]
        line = next((x for x in lines if x["product_id"] == product_id), None)
        if line is None:
            raise ToolError(f"order {order_id} has no {product_id}")
        taken = line["quantity"] if quantity is None else quantity
        if taken <= 0 or taken > line["quantity"]:
            raise ToolError(f"order {order_id} has {line['quantity']} of {product_id}")
        if taken == line["quantity"]:
            lines.remove(line)
        else:
            line["quantity"] -= taken
        if not lines:
            raise ToolError(f"order {order_id} would be empty: cancel it instead")
        order["items"] = lines
        self._release_stock(ctx, product_id, taken)
        ctx.db.put("orders", order_id, self._reprice(ctx, order))
        return {"order_id": order_id, "removed": product_id, "quantity": taken}

    @read
    def get_coupon(self, ctx: Context, code: str) -> dict:
        """Look a coupon up: its discount, minimum subtotal, whether it is for gold-tier
        customers only, and until when it is valid.

        Args:
            code: The coupon's code, such as "WELCOME5".
        """
        coupon = ctx.db.get("coupons", code.strip().upper())
        if coupon is None:
            raise ToolError(f"no coupon {code}")
        return {"code": code.strip().upper(), **coupon}

    @write
    def apply_coupon(self, ctx: Context, order_id: str, code: str) -> dict:
        """Apply a coupon to a pending order (one coupon per order).

        Args:
            order_id: The order.
            code: The coupon's code.
        """
        order = self._order(ctx, order_id)
        self._pending(order_id, order, "coupons")
        code = code.strip().upper()
        coupon = ctx.db.get("coupons", code)
        if coupon is None:
            raise ToolError(f"no coupon {code}")
        if "coupon" in order:
            raise ToolError(f"order {order_id} already has coupon {order['coupon']}")
        if ctx.now > _when(coupon["valid_until"]):
            raise ToolError(f"coupon {code} expired on {coupon['valid_until']}")
        if order["subtotal"] < coupon.get("min_subtotal", 0):
            need = _money(coupon["min_subtotal"])
            raise ToolError(f"coupon {code} needs a subtotal of at least {need}")
        order["coupon"] = code
        ctx.db.put("orders", order_id, self._reprice(ctx, order))
        return {"order_id": order_id, "coupon": code}

    @write
    def remove_coupon(self, ctx: Context, order_id: str) -> dict:
        """Take the coupon off a pending order.

        Args:
            order_id: The order.
        """
        order = self._order(ctx, order_id)
        self._pending(order_id, order, "coupons")
        code = order.pop("coupon", None)
        if code is None:
            raise ToolError(f"order {order_id} has no coupon")
        ctx.db.put("orders", order_id, self._reprice(ctx, order))
        return {"order_id": order_id, "removed": code}

    @write
    def change_shipping(
        self,
        ctx: Context,
        order_id: str,
        method: ShippingMethod | None = None,
        street: str | None = None,
        city: str | None = None,
        postcode: str | None = None,
        country: str | None = None,
    ) -> dict:
        """Change an order's shipping method (only while pending) or its shipping address
        (before it ships); the address fields not given stay as they are.

        Args:
            order_id: The order.
            method: standard or express.
            street: Street and number.
            city: Town or city.
            postcode: Postcode.
            country: Country code.
        """
        order = self._order(ctx, order_id)
        if order["status"] not in OPEN:
            raise ToolError(f"order {order_id} is {order['status']}: its shipping cannot change")
        given = {
            k: v
            for k, v in {
                "street": street,
                "city": city,
                "postcode": postcode,
                "country": country,
            }.items()
            if v is not None
        }
        if method is None and not given:
            raise ToolError("give a method or address fields to change")
        shipping = dict(order["shipping"])
        if method is not None and method != shipping["method"]:
            self._pending(order_id, order, "the shipping method may")
            shipping["method"] = method
        if given:
            address = {**shipping["address"], **given}
            shipping["address"] = self._address(**address)
        order["shipping"] = shipping
        ctx.db.put("orders", order_id, self._reprice(ctx, order))
        return {"order_id": order_id, "shipping": shipping["method"]}

    @write
    def cancel_order(
        self, ctx: Context, order_id: str, reason: CancelReason = "customer_request"
    ) -> dict:
        """Cancel an order; the stock of an order not yet shipped goes back on the shelf (a
        shipped one is recalled from the carrier). Payments are not refunded by this: see
        refund_payment.

        Args:
            order_id: The order.
            reason: Why: customer_request (the default), ordered_by_mistake or
                payment_problem.
        """
        order = self._order(ctx, order_id)
        if order["status"] not in (*OPEN, "shipped"):
            raise ToolError(f"order {order_id} is {order['status']}: it cannot be cancelled")
        if order["status"] == "shipped":
            order["recall_requested"] = True
        else:
            for line in order["items"]:
                self._release_stock(ctx, line["product_id"], line["quantity"])
        order.update(status="cancelled", cancelled_at=ctx.now.isoformat(), cancel_reason=reason)
        ctx.db.put("orders", order_id, order)
        return {"order_id": order_id, "status": "cancelled"}

    # -- payments ------------------------------------------------------------------------------

    @read
    def list_payments(self, ctx: Context, order_id: str) -> list:
        """An order's payments: each with what it captured, what was refunded from it and what
        can still be refunded.

        Args:
            order_id: The order.
        """
        self._order(ctx, order_id)
        return [
            {**p, "refundable": p["amount"] - p["refunded"], "currency": CURRENCY}
            for p in ctx.db.find("payments", order_id=order_id)
        ]

    @write
    def capture_payment(self, ctx: Context, order_id: str, amount: int) -> dict:
        """Charge the card on file of an order's customer: a new payment of the amount for
        the order. A pending order whose payments reach its total becomes paid.

        Args:
            order_id: The order the money is for.
            amount: How much to charge, in cents (positive).
        """
        order = self._order(ctx, order_id)
        if order["status"] in ("cancelled", "returned"):
            raise ToolError(f"order {order_id} is {order['status']}")
        if amount <= 0:
            raise ToolError("the amount must be positive")
        customer = self._customer(ctx, order["customer_id"])
        card = customer.get("card")
        if card is None:
            raise ToolError(f"customer {order['customer_id']} has no card on file")
        payment_id = ctx.new_id("payments", prefix="PAY-")
        ctx.db.put(
            "payments",
            payment_id,
            {
                "order_id": order_id,
                "amount": amount,
                "refunded": 0,
                "status": "captured",
                "card": f"{card['brand']} ending {card['last4']}",
                "captured_at": ctx.now.isoformat(),
            },
        )
        if order["status"] == "pending" and self._paid(ctx, order_id) >= order["total"]:
            ctx.db.update("orders", order_id, status="paid")
        return {"payment_id": payment_id, "captured": amount}

    @write
    def refund_payment(
        self, ctx: Context, payment_id: str, amount: int, reason: RefundReason
    ) -> dict:
        """Refund part or all of a payment to the card it came from.

        Args:
            payment_id: The payment, such as "PAY-5001".
            amount: How much to refund, in cents (at most what the payment still holds).
            reason: Why: cancelled_order, returned_item, duplicate_charge or goodwill.
        """
        payment = ctx.db.get("payments", payment_id)
        if payment is None:
            raise ToolError(f"no payment {payment_id}")
        left = payment["amount"] - payment["refunded"]
        if amount <= 0:
            raise ToolError("the amount must be positive")
        if amount > left:
            raise ToolError(f"payment {payment_id} has {left} left to refund, less than {amount}")
        refunded = payment["refunded"] + amount
        entry = {"amount": amount, "reason": reason, "at": ctx.now.isoformat()}
        ctx.db.update(
            "payments",
            payment_id,
            refunded=refunded,
            status="refunded" if refunded == payment["amount"] else "partially_refunded",
            refunds=[*payment.get("refunds", []), entry],
        )
        return {"payment_id": payment_id, "refunded": amount}

    # -- returns -------------------------------------------------------------------------------

    @read
    def list_returns(self, ctx: Context, order_id: str) -> list:
        """The items returned from an order.

        Args:
            order_id: The order.
        """
        self._order(ctx, order_id)
        return ctx.db.find("returns", order_id=order_id)

    @write
    def return_item(
        self,
        ctx: Context,
        order_id: str,
        product_id: str,
        quantity: int = 1,
        reason: ReturnReason = "unwanted",
    ) -> dict:
        """Take back units of a product from a delivered order; units returned as unwanted or
        the wrong item go back to stock, damaged or faulty ones do not. The money is not
        refunded by this: see refund_payment.

        Args:
            order_id: The order.
            product_id: The product returned.
            quantity: How many units.
            reason: unwanted (the default), wrong_item, damaged or faulty.
        """
        order = self._order(ctx, order_id)
        if order["status"] != "delivered":
            raise ToolError(f"order {order_id} is {order['status']}: only delivered orders")
        lines = [dict(line) for line in order["items"]]
        line = next((x for x in lines if x["product_id"] == product_id), None)
        if line is None:
            raise ToolError(f"order {order_id} has no {product_id}")
        left = line["quantity"] - line.get("returned", 0)
        if quantity <= 0 or quantity > left:
            raise ToolError(f"order {order_id} has {left} of {product_id} left to return")
        line["returned"] = line.get("returned", 0) + quantity
        order["items"] = lines
        if all(x.get("returned", 0) == x["quantity"] for x in lines):
            order["status"] = "returned"
        ctx.db.put("orders", order_id, order)
        if reason not in NOT_RESTOCKED:
            self._release_stock(ctx, product_id, quantity)
        return_id = ctx.new_id("returns", prefix="R-")
        record: dict[str, Any] = {
            "order_id": order_id,
            "product_id": product_id,
            "quantity": quantity,
            "unit_price": line["unit_price"],
            "reason": reason,
            "received_at": ctx.now.isoformat(),
        }
        ctx.db.put("returns", return_id, record)
        return {"return_id": return_id, "order_id": order_id, "quantity": quantity}
