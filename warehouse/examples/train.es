Los niños necesitan dos boletos los domingos.
El médico encuentra las cartas los domingos.
Mi hermano lleva el periódico los domingos.
Mi hermano encuentra dos boletos antes de la cena.
Nosotros compramos las cartas los domingos.
Nuestros vecinos leen dos boletos en el mercado.
Mi abuela compra las cartas todas las mañanas.
Mi hermano compra dos boletos los domingos.
Mi abuela lee dos boletos en el mercado.
Nosotros llevamos pan fresco en el mercado.
Los niños llevan el periódico todas las mañanas.
Mi abuela encuentra un libro nuevo en el mercado.
Los niños necesitan el periódico los domingos.
El médico encuentra el periódico los domingos.
Mi hermano lee una manta caliente antes de la cena.
Los niños compran el periódico todas las mañanas.
Los niños necesitan el periódico todas las mañanas.
Nosotros leemos las cartas en el mercado.
Nuestros vecinos encuentran pan fresco los domingos.
Los niños leen un libro nuevo antes de la cena.
La maestra compra un libro nuevo después del trabajo.
Nuestros vecinos compran dos boletos los domingos.
Nosotros llevamos las cartas antes de la cena.
Mi abuela lee pan fresco antes de la cena.
Los niños necesitan un libro nuevo los domingos.
Los niños llevan dos boletos después del trabajo.
Nuestros vecinos compran el periódico en el mercado.
Nuestros vecinos llevan las cartas todas las mañanas.
Mi hermano compra las cartas después del trabajo.
La maestra necesita las cartas antes de la cena.
Mi abuela lee una manta caliente después del trabajo.
Nuestros vecinos llevan un libro nuevo todas las mañanas.
La maestra encuentra dos boletos los domingos.
Los niños llevan las cartas después del trabajo.
La maestra lleva dos boletos en el mercado.
Mi hermano necesita un libro nuevo después del trabajo.
La maestra lleva una manta caliente antes de la cena.
Mi abuela encuentra dos boletos después del trabajo.
Mi hermano compra el periódico los domingos.
Nosotros llevamos el periódico los domingos.
Nosotros necesitamos pan fresco después del trabajo.
Nosotros compramos una manta caliente después del trabajo.
Nosotros leemos dos boletos en el mercado.
Mi abuela compra las cartas después del trabajo.
Nosotros llevamos un libro nuevo los domingos.
Nuestros vecinos necesitan las cartas en el mercado.
Nosotros llevamos el periódico después del trabajo.
El médico lleva el periódico los domingos.
Nosotros leemos pan fresco después del trabajo.
Nosotros compramos un libro nuevo los domingos.
Mi hermano lee pan fresco en el mercado.
El médico lee pan fresco después del trabajo.
Nosotros leemos las cartas los domingos.
Mi hermano necesita el periódico los domingos.
Mi abuela encuentra una manta caliente antes de la cena.
La maestra necesita las cartas en el mercado.
Los niños llevan una manta caliente los domingos.
El médico lleva las cartas después del trabajo.
Mi abuela encuentra pan fresco los domingos.
Los niños encuentran el periódico después del trabajo.
La maestra encuentra pan fresco los domingos.
Mi hermano lee pan fresco todas las mañanas.
Nuestros vecinos necesitan un libro nuevo después del trabajo.
La maestra lee las cartas antes de la cena.
Nuestros vecinos llevan el periódico los domingos.
Nuestros vecinos encuentran el periódico después del trabajo.
Los niños leen las cartas antes de la cena.
El médico lleva una manta caliente antes de la cena.
El médico necesita pan fresco los domingos.
Mi hermano lleva dos boletos los domingos.
Mi hermano lleva una manta caliente antes de la cena.
Mi hermano necesita dos boletos todas las mañanas.
Nosotros encontramos una manta caliente en el mercado.
Los niños llevan una manta caliente después del trabajo.
Nuestros vecinos compran pan fresco todas las mañanas.
Nuestros vecinos leen el periódico después del trabajo.
Mi abuela lee pan fresco en el mercado.
Mi hermano compra una manta caliente todas las mañanas.
Nuestros vecinos leen dos boletos antes de la cena.
Mi abuela lee dos boletos antes de la cena.
La maestra lee pan fresco todas las mañanas.
Nosotros necesitamos el periódico los domingos.
Los niños necesitan un libro nuevo antes de la cena.
Mi abuela compra el periódico antes de la cena.
Mi hermano lee el periódico los domingos.
El médico encuentra pan fresco después del trabajo.
Nuestros vecinos leen pan fresco todas las mañanas.
El médico necesita pan fresco en el mercado.
Mi abuela necesita dos boletos antes de la cena.
El médico lee dos boletos en el mercado.
La maestra necesita una manta caliente los domingos.
La maestra compra una manta caliente antes de la cena.
Nuestros vecinos encuentran un libro nuevo en el mercado.
Los niños leen pan fresco los domingos.
Nosotros llevamos dos boletos los domingos.
Mi abuela lleva las cartas todas las mañanas.
El médico necesita pan fresco todas las mañanas.
Nuestros vecinos compran dos boletos después del trabajo.
Mi hermano encuentra una manta caliente todas las mañanas.
Nuestros vecinos compran las cartas después del trabajo.
El médico lee pan fresco en el mercado.
Nuestros vecinos llevan el periódico todas las mañanas.
El médico compra las cartas en el mercado.
Nuestros vecinos encuentran una manta caliente antes de la cena.
Los niños necesitan dos boletos antes de la cena.
El médico encuentra dos boletos después del trabajo.
Nuestros vecinos leen el periódico todas las mañanas.
Nuestros vecinos encuentran el periódico los domingos.
Nosotros necesitamos una manta caliente los domingos.
El médico encuentra dos boletos antes de la cena.
La maestra encuentra dos boletos antes de la cena.
Los niños encuentran pan fresco antes de la cena.
Los niños llevan las cartas todas las mañanas.
La maestra compra el periódico antes de la cena.
Mi abuela lee el periódico los domingos.
El médico encuentra una manta caliente todas las mañanas.
El médico encuentra pan fresco todas las mañanas.
Nosotros leemos una manta caliente todas las mañanas.
Nosotros llevamos pan fresco los domingos.
Mi hermano compra una manta caliente en el mercado.
Mi hermano encuentra el periódico en el mercado.
Mi hermano encuentra dos boletos después del trabajo.
Nuestros vecinos leen el periódico antes de la cena.
El médico encuentra dos boletos los domingos.
Nosotros necesitamos dos boletos todas las mañanas.
Los niños encuentran una manta caliente antes de la cena.
Los niños necesitan las cartas antes de la cena.
Nosotros leemos el periódico antes de la cena.
Mi hermano encuentra las cartas después del trabajo.
Nuestros vecinos compran una manta caliente antes de la cena.
Mi abuela encuentra una manta caliente en el mercado.
La maestra lleva un libro nuevo antes de la cena.
Mi abuela lleva el periódico en el mercado.
Los niños necesitan pan fresco antes de la cena.
Mi abuela lleva dos boletos los domingos.
Mi abuela necesita dos boletos en el mercado.
Mi abuela encuentra una manta caliente los domingos.
Mi hermano compra pan fresco los domingos.
La maestra lee un libro nuevo todas las mañanas.
Mi abuela necesita pan fresco en el mercado.
Mi hermano lee las cartas en el mercado.
Mi abuela necesita el periódico antes de la cena.
Nuestros vecinos encuentran una manta caliente después del trabajo.
El médico compra pan fresco todas las mañanas.
Nuestros vecinos necesitan una manta caliente después del trabajo.
Los niños encuentran el periódico todas las mañanas.
Mi hermano lee una manta caliente en el mercado.
El médico encuentra el periódico antes de la cena.
Mi abuela compra las cartas en el mercado.
El médico lleva un libro nuevo antes de la cena.
La maestra compra dos boletos antes de la cena.
Nuestros vecinos encuentran dos boletos todas las mañanas.
Mi hermano compra un libro nuevo en el mercado.
Mi hermano compra las cartas en el mercado.
Mi hermano lee un libro nuevo los domingos.
Nosotros llevamos las cartas en el mercado.
Mi hermano compra pan fresco todas las mañanas.
La maestra compra una manta caliente los domingos.
Mi hermano compra el periódico en el mercado.
Los niños necesitan las cartas después del trabajo.
Nosotros compramos las cartas después del trabajo.
Los niños compran las cartas en el mercado.
Nosotros llevamos las cartas después del trabajo.
La maestra compra pan fresco los domingos.
Los niños necesitan una manta caliente en el mercado.
Los niños necesitan una manta caliente después del trabajo.
Nosotros encontramos un libro nuevo los domingos.
Los niños necesitan una manta caliente los domingos.
El médico compra dos boletos después del trabajo.
La maestra lleva dos boletos después del trabajo.
Mi abuela necesita pan fresco todas las mañanas.
Nuestros vecinos necesitan dos boletos después del trabajo.
Nuestros vecinos llevan pan fresco después del trabajo.
Nosotros leemos pan fresco los domingos.
Mi hermano lee dos boletos después del trabajo.
Nuestros vecinos necesitan pan fresco en el mercado.
Los niños llevan las cartas en el mercado.
Los niños compran un libro nuevo en el mercado.
Nuestros vecinos compran las cartas todas las mañanas.
Mi abuela lee las cartas antes de la cena.
El médico compra dos boletos los domingos.
Nuestros vecinos encuentran dos boletos antes de la cena.
La maestra compra el periódico después del trabajo.
Nosotros llevamos un libro nuevo todas las mañanas.
Nosotros encontramos dos boletos antes de la cena.
Los niños encuentran las cartas después del trabajo.
Mi hermano necesita las cartas los domingos.
Mi hermano lee pan fresco antes de la cena.
Nosotros necesitamos una manta caliente todas las mañanas.
Nuestros vecinos compran las cartas antes de la cena.
Mi abuela necesita pan fresco antes de la cena.
Los niños leen una manta caliente en el mercado.
Nuestros vecinos compran el periódico todas las mañanas.
Mi abuela lee una manta caliente todas las mañanas.
La maestra lee las cartas todas las mañanas.
Nosotros compramos un libro nuevo en el mercado.
La maestra compra las cartas después del trabajo.
Mi abuela lee una manta caliente los domingos.
La maestra encuentra las cartas los domingos.
Mi hermano encuentra las cartas en el mercado.
Mi hermano lee pan fresco los domingos.
Mi hermano compra pan fresco antes de la cena.
Nosotros leemos pan fresco todas las mañanas.
El médico encuentra dos boletos en el mercado.
Mi abuela necesita pan fresco los domingos.
Mi abuela lee las cartas en el mercado.
Mi hermano compra dos boletos después del trabajo.
La maestra compra dos boletos en el mercado.
Los niños necesitan el periódico después del trabajo.
Los niños leen pan fresco en el mercado.
Los niños leen el periódico en el mercado.
El médico lleva un libro nuevo los domingos.
El médico compra dos boletos todas las mañanas.
Nosotros compramos el periódico después del trabajo.
Nuestros vecinos compran pan fresco después del trabajo.
Nuestros vecinos compran el periódico los domingos.
Los niños leen pan fresco antes de la cena.
Nosotros compramos una manta caliente antes de la cena.
La maestra lee pan fresco en el mercado.
Nuestros vecinos llevan un libro nuevo antes de la cena.
Mi abuela necesita dos boletos los domingos.
Nuestros vecinos necesitan el periódico después del trabajo.
Mi hermano lleva un libro nuevo en el mercado.
Mi abuela compra un libro nuevo antes de la cena.
Mi hermano compra pan fresco en el mercado.
La maestra necesita dos boletos antes de la cena.
La maestra necesita el periódico después del trabajo.
El médico lee pan fresco los domingos.
Nuestros vecinos encuentran las cartas todas las mañanas.
Mi hermano lleva pan fresco después del trabajo.
Mi abuela necesita dos boletos todas las mañanas.
Nuestros vecinos necesitan dos boletos todas las mañanas.
La maestra lee dos boletos los domingos.
Mi abuela compra un libro nuevo después del trabajo.
Nuestros vecinos leen pan fresco en el mercado.
Nuestros vecinos necesitan las cartas después del trabajo.
Mi hermano compra un libro nuevo antes de la cena.
Mi abuela lee las cartas los domingos.
La maestra lee el periódico en el mercado.
Los niños encuentran el periódico en el mercado.
¿Dónde está la estación de tren?
La tienda abre a las nueve.
Por favor, cierra la ventana.
Está lloviendo en la ciudad.
¿Cuánto cuesta esto?
No entiendo la pregunta.
El autobús sale al mediodía.
Gracias por tu ayuda.
El agua está fría hoy.
Mi hermana vive cerca del río.
La maestra lee el periódico todas las mañanas.
